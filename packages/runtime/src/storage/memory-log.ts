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

type PendingOp = { shard: number; entry: LogEntry } | { shard: number; drop: readonly string[] };

/** The appends of one turn, applied together on a microtask. */
interface PendingBatch {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (e: Error) => void;
  /** Told through `appendThen`, in append order, before the promise resolves. */
  readonly waiters: AppendWaiter[];
}

/**
 * A {@link Log} held in memory, for tests and `TestEngine`: the same contract as the local log with
 * nothing on disk. Appends made in one turn are applied together on a microtask, which is when
 * their promises resolve, so code awaiting an append sees the same ordering as with a real log.
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
  private pending: PendingOp[] = [];
  private batch: PendingBatch | undefined;
  private closed = false;

  constructor(shards: number) {
    if (!Number.isInteger(shards) || shards < 1) {
      throw new StorageError(`a log needs a positive whole number of shards, got ${shards}`);
    }
    this.shardCount = shards;
    this.shards = Array.from({ length: shards }, () => ({ entries: [], byStream: new Map(), appended: 0, syncs: 0 }));
  }

  append(shard: number, entry: LogEntry): Promise<void> {
    return this.enqueue(shard, [{ shard, entry: copy(entry) }]);
  }

  appendThen(shard: number, stream: string, body: Uint8Array, waiter: AppendWaiter): void {
    const refused = this.refusal(shard);
    if (refused !== undefined) {
      queueMicrotask(() => waiter.failed(refused));
      return;
    }
    this.pending.push({ shard, entry: { stream, body: body.slice() } });
    this.open().waiters.push(waiter);
  }

  appendAll(shard: number, entries: readonly LogEntry[]): Promise<void> {
    return this.enqueue(
      shard,
      entries.map((entry) => ({ shard, entry: copy(entry) })),
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
    return this.enqueue(shard, [{ shard, drop: [...streams] }]);
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
    if (this.batch !== undefined) await this.batch.promise.catch(() => undefined);
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
   * What a crash of the process would leave: appends not yet applied are lost (their promises reject)
   * and this log closes. Returns a new log over the data that survived, as a restart would see it.
   */
  crash(): MemoryLog {
    const lost = this.batch;
    this.pending = [];
    this.batch = undefined;
    this.closed = true;
    const error = new StorageError("the process crashed before the append was durable");
    lost?.reject(error);
    if (lost !== undefined) tellWaiters(lost.waiters, error);
    return this.reopen();
  }

  private enqueue(shard: number, ops: PendingOp[]): Promise<void> {
    const refused = this.refusal(shard);
    if (refused !== undefined) return Promise.reject(refused);
    for (const op of ops) this.pending.push(op);
    return this.open().promise;
  }

  private refusal(shard: number): StorageError | undefined {
    if (this.shards[shard] === undefined || !Number.isInteger(shard)) {
      return new StorageError(`shard ${shard} does not exist (the log has ${this.shardCount} shards)`);
    }
    return this.closed ? new StorageError("the log is closed") : undefined;
  }

  /** The batch of this turn, made (and its apply scheduled) by the turn's first append. */
  private open(): PendingBatch {
    if (this.batch === undefined) {
      let resolve!: () => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.batch = { promise, resolve, reject, waiters: [] };
      queueMicrotask(() => this.apply());
    }
    return this.batch;
  }

  private apply(): void {
    const { pending, batch } = this;
    this.pending = [];
    this.batch = undefined;
    const touched = new Set<MemoryShard>();
    for (const op of pending) {
      const s = this.shards[op.shard]!;
      touched.add(s);
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
    for (const s of touched) s.syncs += 1;
    if (batch === undefined) return;
    tellWaiters(batch.waiters, undefined);
    batch.resolve();
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
