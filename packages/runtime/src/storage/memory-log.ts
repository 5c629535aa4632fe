import { StorageError } from "../core/errors.js";
import { tellWaiters } from "./append-waiters.js";
import type { AppendWaiter, Log, LogEntry, LogStats } from "./log.js";

/** Entries per batch of `scanBatches`. */
const SCAN_BATCH = 1024;

interface StoredEntry {
  readonly stream: string;
  readonly body: Uint8Array;
  dropped: boolean;
}

interface MemoryShard {
  entries: StoredEntry[];
  readonly byStream: Map<string, StoredEntry[]>;
  appended: number;
  syncs: number;
}

type PendingOp = { entry: LogEntry } | { drop: readonly string[] };

/** The appends and drops of one shard not yet applied: its next "sync", applied together on a later turn. */
interface PendingBatch {
  readonly ops: PendingOp[];
  readonly promise: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (e: Error) => void;
  /** Told through `appendThen`, in append order, before the promise resolves. */
  readonly waiters: AppendWaiter[];
}

/**
 * A {@link Log} held in memory, for tests and `TestEngine`: the same contract as the local log with
 * nothing on disk. Each shard gathers what is appended to it into a batch that becomes "durable" on
 * a later turn of the event loop, independently of the other shards, as a real log's syncs are; a
 * {@link crash} keeps or loses each shard's pending batch on its own, as a power cut would.
 *
 * @example
 * const log = new MemoryLog(2);
 * await log.append(0, { stream: "run-1", body: new Uint8Array([1]) });
 * const again = (await log.close(), log.reopen()); // a "restart" that keeps the data
 */
export class MemoryLog implements Log {
  readonly shardCount: number;
  readonly readOnly = false;
  private shards: MemoryShard[];
  /** Each shard's batch not yet applied. */
  private batches: (PendingBatch | undefined)[];
  private closed = false;

  constructor(shards: number) {
    if (!Number.isInteger(shards) || shards < 1) {
      throw new StorageError(`a log needs a positive whole number of shards, got ${shards}`);
    }
    this.shardCount = shards;
    this.shards = Array.from({ length: shards }, () => ({ entries: [], byStream: new Map(), appended: 0, syncs: 0 }));
    this.batches = Array.from({ length: shards }, () => undefined);
  }

  append(shard: number, entry: LogEntry): Promise<void> {
    return this.enqueue(shard, [{ entry: copy(entry) }]);
  }

  appendThen(shard: number, stream: string, body: Uint8Array, waiter: AppendWaiter): void {
    const refused = this.refusal(shard);
    if (refused !== undefined) {
      queueMicrotask(() => waiter.failed(refused));
      return;
    }
    const batch = this.open(shard);
    batch.ops.push({ entry: { stream, body: body.slice() } });
    batch.waiters.push(waiter);
  }

  appendAll(shard: number, entries: readonly LogEntry[]): Promise<void> {
    return this.enqueue(
      shard,
      entries.map((entry) => ({ entry: copy(entry) })),
    );
  }

  async *scan(shard: number): AsyncIterable<LogEntry> {
    for await (const batch of this.scanBatches(shard)) yield* batch;
  }

  async *scanBatches(shard: number): AsyncIterable<readonly LogEntry[]> {
    const s = this.shard(shard);
    let batch: LogEntry[] = [];
    for (const e of s.entries) {
      if (e.dropped) continue;
      batch.push({ stream: e.stream, body: e.body.slice() });
      if (batch.length === SCAN_BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  async read(shard: number, stream: string): Promise<LogEntry[]> {
    const list = this.shard(shard).byStream.get(stream) ?? [];
    return list.map((e) => ({ stream, body: e.body.slice() }));
  }

  streams(shard: number): string[] {
    return [...this.shard(shard).byStream.keys()];
  }

  drop(shard: number, streams: readonly string[]): Promise<void> {
    return this.enqueue(shard, [{ drop: [...streams] }]);
  }

  async compact(shard: number): Promise<number> {
    const s = this.shard(shard);
    let freed = 0;
    for (const e of s.entries) if (e.dropped) freed += Buffer.byteLength(e.stream) + e.body.length;
    s.entries = s.entries.filter((e) => !e.dropped);
    return freed;
  }

  stats(): LogStats {
    return {
      appended: this.shards.map((s) => s.appended),
      syncs: this.shards.map((s) => s.syncs),
      liveEntries: this.shards.map((s) => s.entries.reduce((n, e) => n + (e.dropped ? 0 : 1), 0)),
      bytes: this.shards.map(() => 0),
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.batches.map((b) => b?.promise.catch(() => undefined)));
    this.closed = true;
  }

  /** A new log over this closed log's data, as a process restart would see it. */
  reopen(): MemoryLog {
    if (!this.closed) throw new StorageError("a memory log can be reopened only after close()");
    const log = new MemoryLog(this.shardCount);
    log.shards = this.shards;
    return log;
  }

  /**
   * What a crash of the process would leave: this log closes, and each shard's batch not yet
   * durable is lost or, as if its sync had completed just before the power went, kept, each shard
   * on its own as `keep(shard)` says (by default all are lost). Appends of lost and kept batches
   * alike are never acknowledged. Returns a new log over the data that survived, as a restart would
   * see it.
   */
  crash(keep: (shard: number) => boolean = () => false): MemoryLog {
    const error = new StorageError("the process crashed before the append was durable");
    this.closed = true;
    this.batches.forEach((batch, shard) => {
      if (batch === undefined) return;
      this.batches[shard] = undefined;
      if (keep(shard)) this.store(shard, batch.ops);
      batch.reject(error);
      tellWaiters(batch.waiters, error);
    });
    return this.reopen();
  }

  private enqueue(shard: number, ops: PendingOp[]): Promise<void> {
    const refused = this.refusal(shard);
    if (refused !== undefined) return Promise.reject(refused);
    const batch = this.open(shard);
    batch.ops.push(...ops);
    return batch.promise;
  }

  private refusal(shard: number): StorageError | undefined {
    if (this.shards[shard] === undefined || !Number.isInteger(shard)) {
      return new StorageError(`shard ${shard} does not exist (the log has ${this.shardCount} shards)`);
    }
    return this.closed ? new StorageError("the log is closed") : undefined;
  }

  /** The shard's pending batch, made (and its apply scheduled for a later turn) by its first append. */
  private open(shard: number): PendingBatch {
    let batch = this.batches[shard];
    if (batch === undefined) {
      let resolve!: () => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => undefined);
      const made: PendingBatch = { ops: [], promise, resolve, reject, waiters: [] };
      batch = made;
      this.batches[shard] = made;
      setImmediate(() => this.apply(shard, made));
    }
    return batch;
  }

  private apply(shard: number, batch: PendingBatch): void {
    // A crash took the batch meanwhile.
    if (this.batches[shard] !== batch) return;
    this.batches[shard] = undefined;
    this.store(shard, batch.ops);
    tellWaiters(batch.waiters, undefined);
    batch.resolve();
  }

  private store(shard: number, ops: readonly PendingOp[]): void {
    const s = this.shards[shard]!;
    for (const op of ops) {
      if ("entry" in op) {
        const stored: StoredEntry = { stream: op.entry.stream, body: op.entry.body, dropped: false };
        s.entries.push(stored);
        s.appended += 1;
        const list = s.byStream.get(stored.stream);
        if (list === undefined) s.byStream.set(stored.stream, [stored]);
        else list.push(stored);
      } else {
        for (const stream of op.drop) {
          for (const e of s.byStream.get(stream) ?? []) e.dropped = true;
          s.byStream.delete(stream);
        }
      }
    }
    if (ops.length > 0) s.syncs += 1;
  }

  private shard(shard: number): MemoryShard {
    const s = this.shards[shard];
    if (s === undefined || !Number.isInteger(shard)) {
      throw new StorageError(`shard ${shard} does not exist (the log has ${this.shardCount} shards)`);
    }
    return s;
  }
}

function copy(entry: LogEntry): LogEntry {
  return { stream: entry.stream, body: entry.body.slice() };
}
