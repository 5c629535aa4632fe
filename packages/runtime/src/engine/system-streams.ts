import { SYSTEM_STREAM_PREFIX, checkWellFormed, shardOf } from "../core/ids.js";
import { RejectedError, StorageError } from "../core/errors.js";
import type { PayloadCodec } from "../journal/payload-codec.js";
import { parseStreamName, streamName, type StreamFamily } from "../journal/stream-names.js";
import { decodeSystemRecord, encodeSystemRecord, type SystemRecord } from "../journal/system-records.js";
import type { Log } from "../storage/log.js";

/** Checks a schedule name or a debounce or batch key, which become part of run IDs. */
export function checkFlowName(name: unknown, what: string): string {
  if (typeof name !== "string" || name.length === 0)
    throw new RejectedError(`${what} must be a non-empty string; got ${JSON.stringify(name)}`);
  if (name.length > 900) throw new RejectedError(`${what} '${name.slice(0, 40)}...' is ${name.length} characters long; the limit is 900`);
  checkWellFormed(name, what);
  if (name.startsWith(SYSTEM_STREAM_PREFIX)) {
    throw new RejectedError(`${what} '${name}' starts with '${SYSTEM_STREAM_PREFIX}', which is reserved for the engine's own streams`);
  }
  return name;
}

/**
 * Appends and drops records of the engine's own streams, and tells whether this process may still
 * act for them. All streams of one name (a schedule's generations, a key's windows) live in one
 * shard, so their records are durable in the order they were appended.
 */
export class SystemLog {
  /** Records appended to (or read from) each live stream: the next record's position. */
  private readonly positions = new Map<string, number>();
  /** Appends and drops not yet durable. */
  pending = 0;

  constructor(
    private readonly log: Log,
    private readonly codec: PayloadCodec,
    private readonly maxRecordBytes: number,
    /** Storage failed under an append or a drop: the engine stops acknowledging anything, whoever waited for it. */
    private readonly failed: (e: unknown) => void,
    /** Whether this process may still start work for the shard: false once its lease ran out on its clock, before the shard is forgotten. */
    private readonly leased: (shard: number) => boolean,
  ) {}

  /**
   * Whether this process may still act for a schedule or a debounce or batch key: its lease on their
   * shard has not run out on its clock, whether or not it has heard yet that it lost the shard.
   */
  holds(family: StreamFamily, name: string): boolean {
    return this.leased(this.shardOf(family, name));
  }

  /** Appends a record; resolves once it is durable. Throws `RejectedError` when it is too large. */
  append(family: StreamFamily, name: string, n: number, record: SystemRecord): Promise<void> {
    const stream = streamName(family, name, n);
    const position = this.positions.get(stream) ?? 0;
    const body = encodeSystemRecord(record, this.codec, { workflowId: stream, runId: 0, position });
    if (body.length > this.maxRecordBytes) {
      throw new RejectedError(
        `${record.kind} record of ${family} '${name}' is ${body.length} bytes; the limit is ${this.maxRecordBytes} (Config.maxPayloadBytes)`,
        { reason: "too-large" },
      );
    }
    this.positions.set(stream, position + 1);
    return this.track(this.log.append(this.shardOf(family, name), { stream, body }));
  }

  private track(done: Promise<void>): Promise<void> {
    this.pending++;
    const settled = (): void => void this.pending--;
    done.then(settled, (e: unknown) => {
      settled();
      // A drop's caller may only pass the error on (a schedule's delete) or ignore it (an old generation's drop).
      if (e instanceof StorageError) this.failed(e);
    });
    return done;
  }

  /** Drops streams of one name durably. */
  drop(family: StreamFamily, name: string, ns: readonly number[]): Promise<void> {
    if (ns.length === 0) return Promise.resolve();
    const streams = ns.map((n) => streamName(family, name, n));
    for (const s of streams) this.positions.delete(s);
    return this.track(this.log.drop(this.shardOf(family, name), streams));
  }

  /** Decodes a record read by the engine's recovery scan. */
  recover(stream: string, body: Uint8Array): SystemRecord {
    const position = this.positions.get(stream) ?? 0;
    this.positions.set(stream, position + 1);
    return decodeSystemRecord(body, this.codec, { workflowId: stream, runId: 0, position });
  }

  /** The shard holding every stream of a schedule, or of a debounce or batch key. */
  shardOf(family: StreamFamily, name: string): number {
    return shardOf(`${SYSTEM_STREAM_PREFIX}${family}/${name}`, this.log.shardCount);
  }

  /** Forgets the streams of a shard this process no longer holds; recovering it again counts them anew. */
  forget(shard: number): void {
    for (const stream of [...this.positions.keys()]) {
      const name = parseStreamName(stream);
      if (name !== undefined && this.shardOf(name.family, name.name) === shard) this.positions.delete(stream);
    }
  }
}
