import path from "node:path";
import { ConfigError, StorageError } from "../core/errors.js";
import { compactShard } from "./compaction.js";
import { type DirLock, lockDirectory, writerHolds } from "./dir-lock.js";
import { type FileLayer, nodeFileLayer } from "./file-layer.js";
import { CommitScheduler } from "./commit-scheduler.js";
import { SyncKind } from "./group-commit.js";
import type { AppendWaiter, CommitObserver, FlushMethod, Log, LogEntry, LogStats } from "./log.js";
import { FORMAT_VERSION, type Manifest, readManifest, writeManifest } from "./manifest.js";
import type { RecoveryEvent, RecoveryMode } from "./recovery.js";
import type { RecoveryVisitor } from "./recovery-visitor.js";
import { DIR_MODE, shardDirName } from "./segment.js";
import { Shard } from "./shard.js";

/** Options of {@link openLocalLog}. */
export interface LocalLogOptions {
  /** The data directory; created (mode 0700) on the first open for writing. */
  readonly dir: string;
  /** Number of shards: required to create a directory, checked against the manifest after that. */
  readonly shards?: number;
  /**
   * How appends reach the disk; default `"fdatasync"`. `"dsync"` opens segments with `O_DSYNC`.
   * `"none"` never syncs: nothing survives a power loss, so it is for tests only.
   */
  readonly flush?: FlushMethod;
  /** Size at which a segment is sealed and the next one begun; default 64 MiB. */
  readonly segmentBytes?: number;
  /** Zero-fill the next segment in the background so syncs journal no metadata; default true. */
  readonly preallocate?: boolean;
  /**
   * Open without the lock, never writing: for reading beside a running writer, or without one. An
   * incomplete last write counts as in progress only while a writer holds the directory; without
   * one it is judged as a writer's open would judge it (a torn write is left out and reported,
   * damage is refused), but nothing is cut.
   */
  readonly readOnly?: boolean;
  /** Cut a shard at a corrupt frame instead of refusing to open (the cut is reported in `recovery`). */
  readonly repair?: boolean;
  /** The file system to use; tests inject one that fails or crashes. */
  readonly fileLayer?: FileLayer;
  /**
   * Told of every entry and tombstone recovery keeps while the log opens, in log order, so a caller
   * that indexes the log's entries needs no scan of its own afterwards.
   */
  readonly visitor?: RecoveryVisitor;
}

const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;
/** The first format whose writes open with a batch header. */
const BATCHES_SINCE = 2;
const MIN_SEGMENT_BYTES = 4096;
const SYNC_KINDS: Record<FlushMethod, SyncKind> = {
  fdatasync: SyncKind.Data,
  fsync: SyncKind.Full,
  dsync: SyncKind.DSync,
  none: SyncKind.None,
};

/**
 * Opens (or creates) a data directory as a {@link LocalLog}: recovers every shard, cutting a torn
 * tail and refusing corruption, and takes the directory's writer lock unless `readOnly`.
 *
 * @example
 * const log = await openLocalLog({ dir: "./data", shards: 4 });
 * await log.append(1, { stream: "run-42", body: new TextEncoder().encode("started") });
 * await log.close();
 */
export async function openLocalLog(options: LocalLogOptions): Promise<LocalLog> {
  const log = await prepareLocalLog(options);
  try {
    await log.completeOpen();
  } catch (err) {
    await log.close();
    throw err;
  }
  return log;
}

/**
 * The first half of {@link openLocalLog}: takes the lock and recovers every shard into memory,
 * deciding what to cut, but writes nothing, so an open that is refused afterwards (by this call or
 * by a check of the caller's) leaves the directory as it was. The log reads at once; it appends
 * only after {@link LocalLog.completeOpen}. A read-only open is complete at once.
 *
 * @example
 * const log = await prepareLocalLog({ dir: "./data" });
 * checkSomething(log.manifest); // may throw: nothing was written yet
 * await log.completeOpen();
 */
export async function prepareLocalLog(options: LocalLogOptions): Promise<LocalLog> {
  const layer = options.fileLayer ?? nodeFileLayer;
  const dir = path.resolve(options.dir);
  const flush = options.flush ?? "fdatasync";
  const segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
  const readOnly = options.readOnly ?? false;
  if (!(flush in SYNC_KINDS)) throw new ConfigError(`unknown flush method "${flush}" for ${dir}`);
  if (!Number.isInteger(segmentBytes) || segmentBytes < MIN_SEGMENT_BYTES || segmentBytes > 2 ** 31) {
    throw new ConfigError(`segmentBytes must be a whole number from ${MIN_SEGMENT_BYTES} to 2^31, got ${segmentBytes}`);
  }
  if (options.shards !== undefined && (!Number.isInteger(options.shards) || options.shards < 1)) {
    throw new ConfigError(`shards must be a positive whole number, got ${options.shards}`);
  }
  if (readOnly && options.repair === true) {
    throw new ConfigError(`repair needs a writable open of ${dir}; readOnly and repair exclude each other`);
  }

  let lock: DirLock | undefined;
  let mode: RecoveryMode = "write";
  if (readOnly) {
    if (layer.readdir(dir) === undefined) throw new StorageError(`there is no data directory at ${dir}`);
    mode = writerHolds(layer, dir) ? "read-beside-writer" : "read";
  } else {
    if (layer.readdir(dir) === undefined) {
      layer.mkdir(dir, DIR_MODE);
      layer.syncDir(path.dirname(dir));
    }
    lock = await lockDirectory(layer, dir);
  }
  const shards: Shard[] = [];
  try {
    let manifest = readManifest(layer, dir);
    const created = manifest === undefined;
    if (manifest === undefined) {
      if (readOnly) throw new StorageError(`${dir} is not a fusee data directory (it has no manifest)`);
      if (options.shards === undefined) {
        throw new ConfigError(`creating the data directory ${dir} needs a shard count (option shards)`);
      }
      manifest = { format: FORMAT_VERSION, shards: options.shards, created: new Date().toISOString(), extra: {} };
    } else if (options.shards !== undefined && options.shards !== manifest.shards) {
      throw new ConfigError(
        `the data directory ${dir} was created with ${manifest.shards} shards but is being opened with ` +
          `${options.shards}; the shard count is fixed for the life of the data, so open it with shards: ${manifest.shards}`,
      );
    }
    const scheduler = new CommitScheduler();
    for (let i = 0; i < manifest.shards; i++) {
      shards.push(
        Shard.prepare({
          layer,
          dataDir: dir,
          dir: path.join(dir, shardDirName(i)),
          shard: i,
          syncKind: SYNC_KINDS[flush],
          segmentBytes,
          preallocate: options.preallocate ?? true,
          mode,
          repair: options.repair ?? false,
          framing: manifest.format >= BATCHES_SINCE ? "batches" : "frames",
          scheduler,
          visitor: options.visitor,
        }),
      );
    }
    return new LocalLog(layer, dir, manifest, shards, readOnly, lock, created);
  } catch (err) {
    await Promise.allSettled(shards.map((s) => s.close()));
    lock?.release();
    throw err;
  }
}

/**
 * The embedded {@link Log}: one folder of segment files per shard, group-committed appends, and a
 * stream index in memory. Obtain one with {@link openLocalLog}.
 */
export class LocalLog implements Log {
  readonly shardCount: number;
  /** Everything recovery cut or stopped at when the log was opened, per shard. */
  readonly recovery: readonly RecoveryEvent[];
  private current: Manifest;
  private migrated: number | undefined;
  private completing: Promise<void> | undefined;
  private pending: boolean;
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly compactions: Promise<unknown>[];
  private manifestWrite: Promise<void> = Promise.resolve();

  /** @internal Use {@link openLocalLog}. */
  constructor(
    private readonly layer: FileLayer,
    /** The data directory (absolute). */
    readonly dir: string,
    manifest: Manifest,
    private readonly shards: readonly Shard[],
    readonly readOnly: boolean,
    private readonly lock: DirLock | undefined,
    /** The directory is new: its manifest is written when the open completes. */
    private readonly created: boolean,
  ) {
    this.pending = !readOnly;
    this.shardCount = shards.length;
    this.current = manifest;
    this.recovery = shards.flatMap((s) => s.events);
    this.compactions = shards.map(() => Promise.resolve());
  }

  /** The manifest as last written (or, before a new directory's open completed, as it will be written). */
  get manifest(): Manifest {
    return this.current;
  }

  /** Set when this open moved the directory from an older format (this one) to {@link FORMAT_VERSION}. */
  get migratedFrom(): number | undefined {
    return this.migrated;
  }

  /**
   * The second half of {@link openLocalLog} after {@link prepareLocalLog}: writes what recovery
   * decided (cuts, removed marks), gives every shard a segment to append to, and moves a directory
   * of an older format to the current one. Nothing is appended before it; calling it again does nothing.
   */
  completeOpen(): Promise<void> {
    if (!this.pending) return Promise.resolve();
    this.completing ??= (async () => {
      if (this.created) writeManifest(this.layer, this.dir, this.current);
      for (const s of this.shards) await s.completeOpen();
      // Every shard now appends in a segment that opens with batch headers (a segment written
      // before them was sealed above), so the manifest may say so. A crash before this write leaves
      // format 1, which the next writable open finishes moving.
      if (this.current.format < FORMAT_VERSION) {
        const next = { ...this.current, format: FORMAT_VERSION };
        writeManifest(this.layer, this.dir, next);
        this.migrated = this.current.format;
        this.current = next;
      }
      this.pending = false;
    })();
    return this.completing;
  }

  append(shard: number, entry: LogEntry): Promise<void> {
    const s = this.writable(shard);
    return typeof s === "string" ? reject(s) : s.committer!.append(entry);
  }

  appendThen(shard: number, stream: string, body: Uint8Array, waiter: AppendWaiter): void {
    const s = this.writable(shard);
    if (typeof s === "string") queueMicrotask(() => waiter.failed(new StorageError(s)));
    else s.committer!.appendThen(stream, body, waiter);
  }

  appendAll(shard: number, entries: readonly LogEntry[]): Promise<void> {
    const s = this.writable(shard);
    return typeof s === "string" ? reject(s) : s.committer!.appendAll(entries);
  }

  scan(shard: number): AsyncIterable<LogEntry> {
    return this.shard(shard).scan();
  }

  scanBatches(shard: number): AsyncIterable<readonly LogEntry[]> {
    return this.shard(shard).scanBatches();
  }

  async read(shard: number, stream: string): Promise<LogEntry[]> {
    return this.shard(shard).read(stream);
  }

  streams(shard: number): string[] {
    return this.shard(shard).index.keys();
  }

  /** The live entries of the given streams of a shard, in log order (as `scan` yields them). */
  readStreams(shard: number, streams: readonly string[]): LogEntry[] {
    return this.shard(shard).readStreams(streams);
  }

  drop(shard: number, streams: readonly string[]): Promise<void> {
    const s = this.writable(shard);
    return typeof s === "string" ? reject(s) : s.committer!.drop(streams);
  }

  compact(shard: number): Promise<number> {
    const s = this.writable(shard);
    if (typeof s === "string") return reject(s);
    const run = this.compactions[shard]!.then(
      () => compactShard(s),
      () => compactShard(s),
    );
    this.compactions[shard] = run;
    return run;
  }

  /**
   * Replaces the manifest's `extra` object durably (temporary file, sync, rename, directory sync).
   * Calls apply in order.
   */
  updateManifest(extra: Readonly<Record<string, unknown>>): Promise<void> {
    if (this.readOnly) return reject(`the log at ${this.dir} is open read-only`);
    if (this.closed) return reject("the log is closed");
    if (this.pending) return reject(`the log at ${this.dir} is not open for writing yet (its open has not completed)`);
    const next: Manifest = { ...this.current, extra: JSON.parse(JSON.stringify(extra)) as Record<string, unknown> };
    const run = this.manifestWrite.then(() => {
      writeManifest(this.layer, this.dir, next);
      this.current = next;
    });
    this.manifestWrite = run.catch(() => undefined);
    return run;
  }

  observeCommits(observer: CommitObserver): void {
    for (const s of this.shards) if (s.committer !== undefined) s.committer.observer = observer;
  }

  stats(): LogStats {
    return {
      appended: this.shards.map((s) => s.committer?.appended ?? 0),
      syncs: this.shards.map((s) => s.committer?.syncs ?? 0),
      liveEntries: this.shards.map((s) => s.index.liveEntries),
      bytes: this.shards.map((s) => s.bytes()),
    };
  }

  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      await Promise.allSettled([...this.compactions, this.manifestWrite]);
      await Promise.allSettled(this.shards.map((s) => s.close()));
      this.lock?.release();
    })();
    return this.closing;
  }

  private shard(shard: number): Shard {
    const s = this.shards[shard];
    if (s === undefined || !Number.isInteger(shard)) {
      throw new StorageError(`shard ${shard} does not exist (the log at ${this.dir} has ${this.shardCount} shards)`);
    }
    if (this.closed) throw new StorageError(`the log at ${this.dir} is closed`);
    return s;
  }

  /** The shard, or why it cannot be written. */
  private writable(shard: number): Shard | string {
    const s = this.shards[shard];
    if (s === undefined || !Number.isInteger(shard)) {
      return `shard ${shard} does not exist (the log at ${this.dir} has ${this.shardCount} shards)`;
    }
    if (this.closed) return `the log at ${this.dir} is closed`;
    if (this.readOnly) return `the log at ${this.dir} is open read-only`;
    if (this.pending) return `the log at ${this.dir} is not open for writing yet (its open has not completed)`;
    return s;
  }
}

function reject<T>(message: string): Promise<T> {
  return Promise.reject(new StorageError(message));
}
