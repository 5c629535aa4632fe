import { RunTable } from "./run-table.js";
import { errorOfCode, StorageError } from "../core/errors.js";
import { decodeRecord, readRecordHeader, readRecordKind, type PayloadCodec, type RecordHeader } from "../journal/record-codec.js";
import { INDEXED_KINDS } from "../journal/record-kinds.js";
import { foldRecord, type FoldedRecord, type RunFold } from "../journal/run-fold.js";
import type { LogEntry } from "../storage/log.js";
import { isSystemStream, parseStream } from "../journal/stream-names.js";
import { RunEntry } from "./run-entry.js";

/** What keeping the index needs of the engine. */
export interface RunIndexDeps {
  readonly codec: PayloadCodec;
  /** Arms the durable timer set by call `seq` of the entry's current run. */
  armTimer(until: number, entry: RunEntry, seq: number): void;
  /** Takes a record of one of the engine's own streams (schedules, windows) read on open. */
  recoverSystem(shard: number, stream: string, body: Uint8Array): void;
}

/**
 * The engine's index of runs by workflow ID: what a parked run costs in memory, kept in step with
 * every durable record and rebuilt from the journals on open.
 */
export class RunIndex {
  /** New runs of resets read on open whose copied records are not all read yet, by workflow ID. */
  private readonly copying = new Map<string, { shard: number; stream: string; copied: number; bodies: Uint8Array[] }>();

  constructor(
    private readonly deps: RunIndexDeps,
    /** The runs by workflow ID: empty, or what a one-pass open built (see `RunRecovery`). */
    readonly runs = new RunTable(),
  ) {}

  /** Keeps an entry in step with a record that just became durable (or was read on open). */
  apply(entry: RunEntry, record: FoldedRecord): void {
    foldRecord(entry, record, this.fold);
  }

  /** How the fold of a run's records lands in its index entry. */
  private readonly fold: RunFold<RunEntry> = {
    attributesOf: (entry) => entry.attributes,
    setAttributes: (entry, attributes) => {
      entry.attributes = attributes;
    },
    finished: (entry, status, at) => entry.finish(status, at),
    stopped: (entry, reason) => {
      entry.stopped = reason === undefined ? undefined : errorOfCode(reason.code, reason.message);
    },
    timer: (entry, seq, until) => {
      entry.setTimer(seq);
      this.deps.armTimer(until, entry, seq);
    },
    fired: (entry, seq) => entry.clearTimer(seq),
    childStarted: (entry, childId, seq, runId, close) => (entry.children ??= new Map()).set(childId, { seq, runId, close }),
    childEnded: (entry, childId) => entry.children?.delete(childId),
  };

  /**
   * Adds one journal entry of `shard` read on open; the streams of runs a later run of the same ID
   * replaced go to `superseded`.
   *
   * @throws StorageError when a run's record comes before its start record.
   */
  recover(shard: number, item: LogEntry, superseded: Set<string>): void {
    if (isSystemStream(item.stream)) {
      this.deps.recoverSystem(shard, item.stream, item.body);
      return;
    }
    this.recoverRun(shard, item.stream, item.body, superseded, this.decodeNow);
  }

  /**
   * Adds one record of a run's stream read on open (the streams of other runs are ignored). Records
   * of search attributes go to `attributes`, which decodes and applies them now or later; a timer is
   * armed through `RunIndexDeps.armTimer` as it is read.
   *
   * @throws StorageError when a run's record comes before its start record, unless `beforeStart`
   * takes such a record instead (a later tombstone may drop it; see `RunRecovery`).
   */
  recoverRun(
    shard: number,
    stream: string,
    body: Uint8Array,
    superseded: Set<string>,
    attributes: AttributeSink,
    beforeStart?: () => void,
  ): void {
    const run = parseStream(stream);
    if (run === undefined) return;
    // Most records (steps, signals, updates) only count; only those the index keeps are parsed.
    const kind = readRecordKind(body);
    const header: RecordHeader = INDEXED_KINDS.has(kind) ? readRecordHeader(body) : { kind };
    const copy = this.copying.size === 0 ? undefined : this.copying.get(run.id);
    if (copy !== undefined && copy.stream === stream) {
      copy.bodies.push(body);
      if (copy.bodies.length <= copy.copied) return;
      // The whole copy is durable: the new run begins.
      this.copying.delete(run.id);
      for (const b of copy.bodies) this.index(shard, stream, run, b, superseded, attributes, beforeStart);
      return;
    }
    if (header.kind === "start" && typeof header.copied === "number" && header.copied > 0) {
      this.copying.set(run.id, { shard, stream, copied: header.copied, bodies: [body] });
      return;
    }
    this.index(shard, stream, run, body, superseded, attributes, beforeStart, kind, header);
  }

  /**
   * Streams of resets whose copy a power loss cut short, once every record of the shard was read:
   * those runs never began, and their streams are to be dropped (also when history is kept, as a
   * retried reset writes the same stream again).
   */
  cutCopies(shard: number): string[] {
    const cut: string[] = [];
    for (const [id, copy] of this.copying)
      if (copy.shard === shard) {
        this.copying.delete(id);
        cut.push(copy.stream);
      }
    return cut;
  }

  /** A stream read on open was dropped later in the log: a copy of it read so far is gone too. */
  forgetCopy(stream: string): void {
    const run = this.copying.size === 0 ? undefined : parseStream(stream);
    if (run !== undefined && this.copying.get(run.id)?.stream === stream) this.copying.delete(run.id);
  }

  private index(
    shard: number,
    stream: string,
    run: { readonly id: string; readonly runId: number },
    body: Uint8Array,
    superseded: Set<string>,
    attributes: AttributeSink,
    beforeStart: (() => void) | undefined,
    kind = readRecordKind(body),
    header: RecordHeader = INDEXED_KINDS.has(kind) ? readRecordHeader(body) : { kind },
  ): void {
    let entry = this.runs.get(run.id);
    if (entry !== undefined && run.runId < entry.runId) {
      superseded.add(stream);
      return;
    }
    if (header.kind === "start") {
      if (entry === undefined) {
        entry = new RunEntry(run.id, shard);
        this.runs.set(run.id, entry);
      } else if (run.runId > entry.runId) superseded.add(entry.stream);
      entry.reset(header.type as string, run.runId, header.at as number, stream);
      attributes.reset?.(entry);
      if (header.parent !== undefined) entry.parent = header.parent as RunEntry["parent"];
      if (typeof header.trace === "string") entry.trace = header.trace;
    } else if (entry === undefined || run.runId !== entry.runId) {
      if (beforeStart !== undefined) return beforeStart();
      throw new StorageError(`shard ${shard} holds a ${header.kind} record of run ${run.runId} of '${run.id}' before its start record`);
    }
    const position = entry.appended++;
    if (header.kind === "attributes" || (header.kind === "start" && header.attributes === true)) {
      attributes.take(entry, body, position);
    } else if (INDEXED_KINDS.has(kind)) {
      this.apply(entry, header);
    }
    entry.durable = entry.appended;
  }

  /** Decodes a record of search attributes of `entry`'s current run at `position` and applies it. */
  decodeAttributes(entry: RunEntry, body: Uint8Array, position: number): void {
    this.apply(entry, decodeRecord(body, this.deps.codec, { workflowId: entry.id, runId: entry.runId, position }));
  }

  private readonly decodeNow: AttributeSink = {
    take: (entry, body, position) => this.decodeAttributes(entry, body, position),
  };
}

/** Where recovery hands the records that set search attributes, which only the payload codec decodes. */
export interface AttributeSink {
  /** A record of `entry`'s current run at `position`: a start that carries attributes, or an attributes record. */
  take(entry: RunEntry, body: Uint8Array, position: number): void;
  /** A new run of `entry`'s ID started: what was taken for the previous run no longer applies. */
  reset?(entry: RunEntry): void;
}
