/*
 * Group commit: how an append becomes durable.
 *
 * Appends made while a batch is being written go into the shard's open batch (frames encoded
 * straight into one reused buffer, CRC computed once, one promise shared by the whole batch). A
 * scheduler tick (see `CommitScheduler`) then writes each ready batch with one write and one sync.
 *
 * Where the sync runs was chosen by measuring, on the target machine, a small write + sync three
 * ways: a synchronous `fdatasyncSync` on the event loop was the fastest for one shard alone;
 * `fs.fdatasync` through the libuv pool cost a little more per sync but let several shards sync in
 * parallel; a worker thread per shard cost more in hand-off than the pool and bought nothing over it.
 * So the hybrid: when exactly one shard has a batch ready and no other shard has a sync in flight,
 * the batch is written and synced synchronously on the event loop, which costs the sync plus the
 * JavaScript around it. Otherwise every ready shard writes synchronously (into the page cache) and
 * syncs on the libuv pool, so shards sync in parallel while the loop encodes the next batches.
 * There are no workers. What an append costs against the sync alone is in docs/performance.md.
 *
 * Durability rules kept here: a batch's promise resolves only after its sync returned; the first
 * failed write or sync makes the shard fatal (the failing batch, the open batch and every later
 * append reject with a `StorageError`), and a sync is never retried, since after a failed fsync the
 * kernel may have dropped the dirty pages it could not write.
 */
import { StorageError } from "../core/errors.js";
import type { CommitScheduler } from "./commit-scheduler.js";
import { BATCH_FRAME_BYTES, encodeBatchHeader } from "./batch-frame.js";
import { type FileLayer, writeFully } from "./file-layer.js";
import { FrameKind, MAX_KEY_BYTES, MAX_PAYLOAD_BYTES, SEAL_FRAME_BYTES, encodeFrame, maxFrameBytes } from "./frame.js";
import { BatchFront, PendingBatch } from "./batch-front.js";
import type { CommitObserver, LogEntry } from "./log.js";
import type { Segment } from "./segment.js";
import { type StreamIndex, position } from "./stream-index.js";

/** How a shard makes a written batch durable. */
export const SyncKind = {
  None: 0,
  Data: 1,
  Full: 2,
  /** The segment is open with O_DSYNC: the write is the sync. */
  DSync: 3,
} as const;
export type SyncKind = (typeof SyncKind)[keyof typeof SyncKind];

/** What a committer writes into: the shard's segments and index. */
export interface CommitTarget {
  readonly shard: number;
  readonly layer: FileLayer;
  readonly segmentBytes: number;
  readonly index: StreamIndex;
  /** The segment the next frames go to. */
  active(): Segment;
  /** Seals the active segment and opens the next one, synchronously and durably. */
  roll(): void;
  /** Told after frames were made durable in `segment` (to start preparing the next segment). */
  written(segment: Segment): void;
}

const STAGE_TEXT = ["writing to", "syncing", "rolling over from"] as const;
const WRITE = 0;
const SYNC = 1;
const ROLL = 2;

/**
 * Frames waiting for one write and one sync. The first {@link BATCH_FRAME_BYTES} of `buf` are kept
 * for the batch header, so a batch written whole goes out in one write without a copy.
 */
class Batch extends PendingBatch {
  buf: Buffer = Buffer.allocUnsafe(64 * 1024);
  len = BATCH_FRAME_BYTES;
  /** Frames in the batch; `keys` and `offs` keep their capacity between batches. */
  count = 0;
  /** Key of each frame. */
  readonly keys: string[] = [];
  /** Start of each frame in `buf`; a drop frame is stored as the bitwise NOT of its start. */
  readonly offs: number[] = [];
  entries = 0;
  /** Set once the scheduler was asked to flush this batch. */
  wanted = false;

  start(i: number): number {
    const o = this.offs[i]!;
    return o >= 0 ? o : ~o;
  }

  reset(): void {
    this.len = BATCH_FRAME_BYTES;
    this.count = 0;
    this.entries = 0;
    this.wanted = false;
    this.forgetWaiters();
  }
}

/**
 * The append side of one shard: batches (through the shared front end), writes, syncs, and applies
 * durable frames to the index. Its flush strategy is the {@link CommitScheduler}'s.
 */
export class ShardCommitter extends BatchFront<Batch> {
  /** Entries made durable since open. */
  appended = 0;
  /** Batches synced since open. */
  syncs = 0;
  /** Set while the scheduler has this committer in its ready list. */
  queued = false;
  private open = new Batch();
  /** Settled batches kept for reuse, with their grown buffers (at most one per batch ever in use at once). */
  private readonly free: Batch[] = [new Batch()];
  private flying: Batch | undefined;
  private fatal: StorageError | undefined;
  private stage = WRITE;
  /** Told of each batch synced; `takenAt` is when the batch in flight was taken, while there is one. */
  observer: CommitObserver | undefined = undefined;
  private takenAt = 0;

  constructor(
    private readonly target: CommitTarget,
    private readonly syncKind: SyncKind,
    private readonly scheduler: CommitScheduler,
    /** The number of the next batch header; one more than the last batch on disk. */
    private nextBatch: number,
  ) {
    super();
  }

  /** The error that made this shard fatal, if any. */
  get failure(): StorageError | undefined {
    return this.fatal;
  }

  get busy(): boolean {
    return this.flying !== undefined;
  }

  get hasPending(): boolean {
    return this.open.count > 0;
  }

  get pendingFrames(): number {
    return this.open.count;
  }

  drop(streams: readonly string[]): Promise<void> {
    if (this.fatal !== undefined) return Promise.reject(this.fatal);
    for (const s of streams) {
      const problem = this.check(s, 0);
      if (problem !== undefined) return Promise.reject(problem);
    }
    if (streams.length === 0) return Promise.resolve();
    const b = this.open;
    for (const s of streams) this.encode(b, FrameKind.Drop, s, undefined);
    return this.promiseOf(b);
  }

  /** Resolves once nothing is pending or in flight (failures included). */
  async idle(): Promise<void> {
    for (;;) {
      const b = this.flying ?? (this.open.count > 0 ? this.open : undefined);
      if (b === undefined) return;
      // Its appenders hear a failure; idle only waits for it to be over.
      await this.promiseOf(b).catch(() => undefined);
    }
  }

  /** Writes and syncs the open batch on the calling thread: the lowest-latency path. */
  flushInline(): void {
    const b = this.take();
    try {
      const n = b.count;
      let from = 0;
      while (from < n) {
        const seg = this.target.active();
        const k = this.fit(b, from, seg);
        if (k === from) {
          this.stage = ROLL;
          this.target.roll();
          continue;
        }
        const start = this.frameBatch(b, from, k);
        const end = k < n ? b.start(k) : b.len;
        this.stage = WRITE;
        writeFully(this.target.layer, seg.fd, b.buf, start, end - start, seg.end);
        if (this.syncKind === SyncKind.Data || this.syncKind === SyncKind.Full) {
          this.stage = SYNC;
          this.target.layer.sync(seg.fd, this.syncKind === SyncKind.Data);
        }
        this.commitPart(b, from, k, seg, start, end);
        from = k;
      }
    } catch (err) {
      this.fail(err);
      return;
    }
    this.finish(b);
  }

  /** Writes the open batch and syncs it on the libuv pool; `done` runs when it settled. */
  flushAsync(done: () => void): void {
    const b = this.take();
    const n = b.count;
    const layer = this.target.layer;
    let from = 0;
    const step = (): void => {
      try {
        while (from < n) {
          const seg = this.target.active();
          const k = this.fit(b, from, seg);
          if (k === from) {
            this.stage = ROLL;
            this.target.roll();
            continue;
          }
          const start = this.frameBatch(b, from, k);
          const end = k < n ? b.start(k) : b.len;
          const advance = (err: Error | null): void => {
            if (err !== null) {
              this.fail(err);
              done();
              return;
            }
            this.commitPart(b, from, k, seg, start, end);
            from = k;
            step();
          };
          this.stage = WRITE;
          if (this.syncKind === SyncKind.DSync) {
            writeAllAsync(layer, seg.fd, b.buf, start, end - start, seg.end, advance);
            return;
          }
          writeFully(layer, seg.fd, b.buf, start, end - start, seg.end);
          if (this.syncKind === SyncKind.None) {
            this.commitPart(b, from, k, seg, start, end);
            from = k;
            continue;
          }
          this.stage = SYNC;
          layer.syncAsync(seg.fd, this.syncKind === SyncKind.Data, advance);
          return;
        }
      } catch (err) {
        this.fail(err);
        done();
        return;
      }
      this.finish(b);
      done();
    };
    step();
  }

  protected refusal(): StorageError | undefined {
    return this.fatal;
  }

  protected add(stream: string, body: Uint8Array): Batch {
    const b = this.open;
    this.encode(b, FrameKind.Entry, stream, body);
    b.entries += 1;
    return b;
  }

  protected addAll(entries: readonly LogEntry[]): Batch {
    const b = this.open;
    for (const e of entries) this.encode(b, FrameKind.Entry, e.stream, e.body);
    b.entries += entries.length;
    return b;
  }

  protected check(key: string, payloadBytes: number): StorageError | undefined {
    if (payloadBytes > MAX_PAYLOAD_BYTES) {
      return new StorageError(`an entry of stream "${key.slice(0, 80)}" has ${payloadBytes} bytes; the limit is ${MAX_PAYLOAD_BYTES}`);
    }
    if (key.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(key) > MAX_KEY_BYTES) {
      return new StorageError(`stream key "${key.slice(0, 80)}…" is longer than ${MAX_KEY_BYTES} UTF-8 bytes`);
    }
    return undefined;
  }

  private encode(b: Batch, kind: FrameKind, key: string, body: Uint8Array | undefined): void {
    const need = maxFrameBytes(key, body?.length ?? 0);
    if (b.len + need > b.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(b.buf.length * 2, b.len + need));
      b.buf.copy(bigger, 0, 0, b.len);
      b.buf = bigger;
    }
    b.keys[b.count] = key;
    b.offs[b.count] = kind === FrameKind.Drop ? ~b.len : b.len;
    b.count += 1;
    b.len = encodeFrame(b.buf, b.len, kind, key, body);
  }

  /** Asks the scheduler to flush the open batch (once per batch; the batch in flight needs no asking). */
  protected want(b: Batch): void {
    if (b === this.flying) return;
    // A lone entry awaited by promise (a waiter must not hear during its call) on an idle shard,
    // when the scheduler sees one appender awaiting each append: written and synced right here,
    // without the hop to the scheduler's tick.
    if (b.count === 1 && b.waiters.length === 0 && this.flying === undefined && this.fatal === undefined && this.scheduler.claimInCall()) {
      this.flushInline();
      return;
    }
    if (b.wanted) return;
    b.wanted = true;
    this.scheduler.want(this);
  }

  private take(): Batch {
    if (this.observer !== undefined) this.takenAt = performance.now();
    const b = this.open;
    this.open = this.free.pop() ?? new Batch();
    this.flying = b;
    return b;
  }

  /**
   * How many frames from `from` on fit the segment (leaving room for their batch header and the
   * segment's seal); `from` itself when none fits and the segment already holds frames, so the
   * caller rolls over first. An empty segment takes at least one frame, however large.
   */
  private fit(b: Batch, from: number, seg: Segment): number {
    const n = b.count;
    const room = this.target.segmentBytes - seg.end - SEAL_FRAME_BYTES - BATCH_FRAME_BYTES;
    const base = b.start(from);
    if (b.len - base <= room) return n;
    let lo = from;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const end = mid < n ? b.start(mid) : b.len;
      if (end - base <= room) lo = mid;
      else hi = mid - 1;
    }
    return lo === from && seg.frames === 0 ? from + 1 : lo;
  }

  /**
   * Puts a batch header before frames `[from, k)` and returns where in `buf` the write starts. A
   * batch split by a rollover is two writes with a sync each, so each part gets a header of its
   * own: the second part's header overwrites the end of the first part in `buf`, which is on disk
   * and synced by then (the parts are written one after the other).
   */
  private frameBatch(b: Batch, from: number, k: number): number {
    const start = b.start(from) - BATCH_FRAME_BYTES;
    const end = k < b.count ? b.start(k) : b.len;
    encodeBatchHeader(b.buf, start, this.nextBatch, end - start - BATCH_FRAME_BYTES);
    return start;
  }

  private commitPart(b: Batch, from: number, k: number, seg: Segment, start: number, end: number): void {
    this.nextBatch += 1;
    const index = this.target.index;
    const base = seg.end - start;
    for (let i = from; i < k; i++) {
      const o = b.offs[i]!;
      if (o >= 0) index.add(b.keys[i]!, position(seg.seq, base + o));
      else index.drop(b.keys[i]!);
    }
    seg.end += end - start;
    seg.frames += k - from;
    this.target.written(seg);
  }

  private finish(b: Batch): void {
    this.counted(b);
    this.flying = undefined;
    b.settle(undefined);
    this.release(b);
  }

  private counted(b: Batch): void {
    this.syncs += 1;
    this.appended += b.entries;
    this.observer?.committed(this.target.shard, performance.now() - this.takenAt, b.entries, b.len);
  }

  /** Waiters ran (in `settle`) before a batch is reused. */
  private release(b: Batch): void {
    b.reset();
    this.free.push(b);
  }

  private fail(err: unknown): void {
    const cause = err instanceof Error ? err : new Error(String(err));
    let where = "its segment";
    try {
      where = this.target.active().path;
    } catch {
      // The shard has no active segment left to name.
    }
    this.fatal = new StorageError(
      `shard ${this.target.shard} stopped: ${STAGE_TEXT[this.stage]} ${where} failed (${cause.message}). ` +
        "Nothing appended to this shard after the failure is acknowledged and the sync is not retried; " +
        "reopen the log to recover what is durable",
      { cause },
    );
    const flying = this.flying;
    const open = this.open;
    this.flying = undefined;
    this.open = new Batch();
    flying?.settle(this.fatal);
    open.settle(this.fatal);
  }
}

function writeAllAsync(
  layer: FileLayer,
  fd: number,
  buf: Buffer,
  offset: number,
  length: number,
  position: number,
  done: (err: Error | null) => void,
): void {
  layer.writeAsync(fd, buf, offset, length, position, (err, written) => {
    if (err !== null) done(err);
    else if (written <= 0) done(new Error(`write made no progress at position ${position}`));
    else if (written < length) writeAllAsync(layer, fd, buf, offset + written, length - written, position + written, done);
    else done(null);
  });
}
