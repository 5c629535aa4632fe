import { RejectedError, StorageError } from "../core/errors.js";
import { decodeRecord, encodeRecord, type PayloadCodec } from "../journal/record-codec.js";
import type { FinishRecord, JournalRecord } from "../journal/records.js";
import type { Log } from "../storage/log.js";
import { type DurableSink, RecordWaiter } from "./record-waiter.js";
import type { RunEntry } from "./run-entry.js";

/** What appending a run's records needs of the runs around it. */
export interface RunRecordsDeps {
  readonly log: Log;
  readonly codec: PayloadCodec;
  readonly maxRecordBytes: number;
  /** Finished and superseded journals are kept (`Config.keepHistory`). */
  readonly keepHistory: boolean;
  /** Where records go once durable, or the failure that stopped them. */
  readonly sink: DurableSink;
  /** Throws when nothing may be appended any more (the engine shut down or failed). */
  assertOpen(): void;
  /** True once appends are dropped silently: the engine shut down or failed (and said so). */
  stopped(): boolean;
  /** A drop of a superseded journal failed. */
  failed(error: unknown, shard: number): void;
}

/**
 * The journals of the runs a process holds: records encoded and appended in journal order, and
 * read back. Every record of a run is appended through here, so the records of one run reach the
 * sink in journal order whichever way they were appended.
 */
export class RunRecords implements DurableSink {
  /** Records appended and not yet durable (or failed). */
  unsynced = 0;
  /** Callers waiting for every record appended to a run to be durable (see `settled`): few, and rarely any. */
  private readonly settling = new Map<RunEntry, { readonly resolve: () => void; readonly reject: (e: unknown) => void }[]>();
  /** Entries of shards this process let go, with why: a caller that still holds one must not wait on it. */
  private readonly forgotten = new WeakMap<RunEntry, unknown>();

  constructor(private readonly deps: RunRecordsDeps) {}

  durable(entry: RunEntry, runId: number, position: number, record: JournalRecord, body: Uint8Array): void {
    this.unsynced--;
    this.deps.sink.durable(entry, runId, position, record, body);
    if (this.settling.size !== 0 && entry.durable === entry.appended) this.settle(entry);
  }

  failed(error: unknown, shard: number): void {
    this.unsynced--;
    this.rejectSettling(shard, error);
    this.deps.sink.failed(error, shard);
  }

  /**
   * Resolves once every record appended to the entry's current run so far is durable and was
   * handed to its executor: what replacing the run reads is then its whole journal.
   */
  settled(entry: RunEntry): Promise<void> {
    if (entry.durable === entry.appended) return Promise.resolve();
    if (this.forgotten.has(entry)) return Promise.reject(this.forgotten.get(entry));
    return new Promise((resolve, reject) => {
      const waiters = this.settling.get(entry) ?? [];
      waiters.push({ resolve, reject });
      this.settling.set(entry, waiters);
    });
  }

  /**
   * The runs of a shard this process no longer holds: what they appended and is not durable never
   * becomes durable here (its appends failed or will), so whoever waits for one of them to settle
   * hears `error`, now or when it asks later through an entry it still holds.
   */
  forget(shard: number, entries: Iterable<RunEntry>, error: unknown): void {
    for (const entry of entries) this.forgotten.set(entry, error);
    this.rejectSettling(shard, error);
  }

  /** Whoever waits for a run of `shard` to settle hears `error`: its records will not become durable. */
  private rejectSettling(shard: number, error: unknown): void {
    for (const [entry, waiters] of this.settling) {
      if (entry.shard !== shard) continue;
      this.settling.delete(entry);
      for (const w of waiters) w.reject(error);
    }
  }

  /** Nothing more becomes durable (the engine shut down or failed): whoever waits for a run to settle hears `error`. */
  abandon(error: unknown): void {
    const all = [...this.settling.values()];
    this.settling.clear();
    for (const waiters of all) for (const w of waiters) w.reject(error);
  }

  private settle(entry: RunEntry): void {
    const waiters = this.settling.get(entry);
    if (waiters === undefined) return;
    this.settling.delete(entry);
    for (const w of waiters) w.resolve();
  }

  encode(id: string, runId: number, position: number, record: JournalRecord): Uint8Array {
    const body = encodeRecord(record, this.deps.codec, { workflowId: id, runId, position });
    if (body.length > this.deps.maxRecordBytes) {
      throw new RejectedError(
        `${record.kind} record of ${id} is ${body.length} bytes; the limit is ${this.deps.maxRecordBytes} (Config.maxPayloadBytes)`,
        { reason: "too-large" },
      );
    }
    return body;
  }

  /** Appends at the next position of the run's journal; resolves once durable. */
  append(entry: RunEntry, record: JournalRecord): Promise<void> {
    let body: Uint8Array;
    try {
      body = this.encode(entry.id, entry.runId, entry.appended, record);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.appendEncoded(entry, record, body);
  }

  /**
   * Appends a record the run's code made (a step's outcome, a timer): an encoding error goes back to
   * the code, a storage failure stops the engine. The hot path of every step, so it allocates the
   * record's waiter and nothing else (no promise).
   */
  appendFromRun(entry: RunEntry, record: JournalRecord): void {
    // Nothing follows a finish (a termination may have come while a step ran).
    if (entry.finishAppended) return;
    const body = this.encode(entry.id, entry.runId, entry.appended, record);
    // A closed or failed engine journals nothing more; the failure has been reported already.
    if (this.deps.stopped()) return;
    this.enqueue(entry, record, body, undefined, undefined);
  }

  /** Appends an encoded record (encoded at the position it will take); resolves once durable. */
  appendEncoded(entry: RunEntry, record: JournalRecord, body: Uint8Array): Promise<void> {
    try {
      this.deps.assertOpen();
      if (entry.finishAppended)
        throw new RejectedError(`run ${entry.runId} of '${entry.id}' has finished; its journal takes no ${record.kind} record`, {
          reason: "already-finished",
        });
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => this.enqueue(entry, record, body, resolve, reject));
  }

  /** The first `upTo` records of the run's current journal, decoded. */
  async read(entry: RunEntry, upTo = entry.durable): Promise<JournalRecord[]> {
    const entries = await this.deps.log.read(entry.shard, entry.stream);
    const records: JournalRecord[] = [];
    for (let position = 0; position < Math.min(upTo, entries.length); position++) {
      const body = (entries[position] as { body: Uint8Array }).body;
      records.push(decodeRecord(body, this.deps.codec, { workflowId: entry.id, runId: entry.runId, position }));
    }
    return records;
  }

  async finishRecordOf(entry: RunEntry): Promise<FinishRecord> {
    const journal = await this.read(entry);
    const last = journal[journal.length - 1];
    if (last?.kind !== "finish")
      throw new StorageError(`run ${entry.runId} of '${entry.id}' is finished but its journal has no finish record`);
    return last;
  }

  /** Drops a superseded run's journal, unless finished journals are kept. */
  drop(shard: number, stream: string): void {
    if (this.deps.keepHistory) return;
    this.discard(shard, stream);
  }

  /** Drops a journal that is no run's (kept history or not): the records of a run that never began. */
  discard(shard: number, stream: string): void {
    void this.deps.log.drop(shard, [stream]).catch((e: unknown) => this.deps.failed(e, shard));
  }

  private enqueue(entry: RunEntry, record: JournalRecord, body: Uint8Array, resolve?: () => void, reject?: (e: unknown) => void): void {
    if (record.kind === "finish") entry.finishing();
    const waiter = new RecordWaiter(this, entry, entry.runId, entry.appended++, record, body, resolve, reject);
    this.unsynced++;
    this.deps.log.appendThen(entry.shard, entry.stream, body, waiter);
  }
}
