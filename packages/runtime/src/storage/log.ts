/**
 * The storage contract the engine builds on. A log is a set of shards; each shard is an ordered,
 * append-only sequence of entries. An entry belongs to a stream (an opaque key the caller chooses);
 * storage never interprets entry bodies.
 */

/** One entry of a shard: the stream it belongs to and an opaque body. */
export interface LogEntry {
  readonly stream: string;
  readonly body: Uint8Array;
}

/**
 * Told the outcome of an append made with {@link Log.appendThen}: `appended` once the entry is
 * durable, or `failed` with the `StorageError` that stopped it. Exactly one of them is called, never
 * during the `appendThen` call itself.
 */
export interface AppendWaiter {
  appended(): void;
  failed(error: Error): void;
}

/** The largest entry body every log accepts (the local and PostgreSQL logs hold this much, no more). */
export const MAX_ENTRY_BYTES = 256 * 1024 * 1024;

/** How appended data reaches the disk. `"none"` is for tests only: nothing is durable. */
export type FlushMethod = "fdatasync" | "fsync" | "dsync" | "none";

/** Figures a log keeps about itself, for benchmarks and `describe`. */
export interface LogStats {
  /** Entries appended since open, per shard. */
  readonly appended: readonly number[];
  /** Syncs (or synced batches) since open, per shard. */
  readonly syncs: readonly number[];
  /** Entries that are live (not dropped), per shard. */
  readonly liveEntries: readonly number[];
  /** Bytes on disk, per shard (0 for memory). */
  readonly bytes: readonly number[];
}

/**
 * A sharded append-only log.
 *
 * Invariants every engine keeps:
 * - `append` resolves only once the entry is durable (for `flush: "none"`, once written);
 *   entries of one shard are durable in the order they were appended.
 * - After any failed write or sync the shard is fatal: pending and later appends reject with
 *   `StorageError`, and nothing appended after the failure is ever acknowledged.
 * - `scan` (and `scanBatches`) yield exactly the durable, non-dropped entries of a shard in append order.
 */
/** Told of each batch a log made durable: one write and one sync (or one insert) for all its records. */
export interface CommitObserver {
  committed(shard: number, ms: number, records: number, bytes: number): void;
}

export interface Log {
  /** Number of shards, fixed for the life of the data. */
  readonly shardCount: number;
  /** True for a read-only open: `append`, `drop` and `compact` reject. */
  readonly readOnly: boolean;

  /** Appends one entry to a shard; resolves when it is durable. */
  append(shard: number, entry: LogEntry): Promise<void>;

  /**
   * `append` for callers that make an entry per step and cannot afford a promise reaction each:
   * the waiter is told when the entry is durable, in the order the entries were appended, before
   * the promises of `append` calls of the same batch resolve. A refused entry (a closed log, an
   * unknown shard, a fatal shard) is told on a later microtask, never during the call.
   */
  appendThen(shard: number, stream: string, body: Uint8Array, waiter: AppendWaiter): void;

  /** Appends entries to a shard in order; resolves when all of them are durable. */
  appendAll(shard: number, entries: readonly LogEntry[]): Promise<void>;

  /** Yields every live entry of a shard, in append order. */
  scan(shard: number): AsyncIterable<LogEntry>;

  /**
   * Yields the live entries of a shard in append order in batches, for readers of whole shards
   * (recovery), which would otherwise pay an asynchronous turn per entry. An entry dropped while a
   * scan is under way may still appear in a batch read before the drop.
   */
  scanBatches(shard: number): AsyncIterable<readonly LogEntry[]>;

  /** The live entries of one stream, in append order (empty when the stream is unknown or dropped). */
  read(shard: number, stream: string): Promise<LogEntry[]>;

  /** Streams with live entries in a shard. */
  streams(shard: number): string[];

  /**
   * Drops every entry of the given streams durably (they no longer appear in `scan` or `read`, also
   * after a reopen). A stream written to again after the drop starts empty.
   */
  drop(shard: number, streams: readonly string[]): Promise<void>;

  /** Reclaims the space of dropped entries; returns the bytes freed. */
  compact(shard: number): Promise<number>;

  /** Counters for benchmarks and diagnostics. */
  stats(): LogStats;

  /**
   * Tells `observer` of every batch made durable from now on, for metrics; logs that cannot tell
   * leave it out. One observer at a time: a later call replaces it.
   */
  observeCommits?(observer: CommitObserver): void;

  /** Waits for pending appends, then releases files and the directory lock. */
  close(): Promise<void>;
}
