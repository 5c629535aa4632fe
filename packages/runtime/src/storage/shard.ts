import path from "node:path";
import { StorageError } from "../core/errors.js";
import { writeCleanMark } from "./clean-mark.js";
import { type FileLayer, writeFully } from "./file-layer.js";
import { FrameKind, FrameView, SEAL_FRAME_BYTES, encodeSeal } from "./frame.js";
import { FrameReader } from "./frame-reader.js";
import { SegmentWindow } from "./segment-window.js";
import type { CommitScheduler } from "./commit-scheduler.js";
import { type CommitTarget, ShardCommitter, SyncKind } from "./group-commit.js";
import type { LogEntry } from "./log.js";
import { FIRST_SEGMENT_PREALLOCATION, Preallocator } from "./preallocator.js";
import { type RecoveryEvent, type RecoveryMode, recoverShard } from "./recovery.js";
import type { RecoveryVisitor } from "./recovery-visitor.js";
import { type ShardPlan, applyShardPlan } from "./recovery-plan.js";
import type { Framing } from "./segment-scan.js";
import { DIR_MODE, FILE_MODE, Segment, segmentName } from "./segment.js";
import { StreamIndex, position, positionOffset, positionSeq } from "./stream-index.js";

export interface ShardOptions {
  readonly layer: FileLayer;
  /** The data directory, named in the advice of errors. */
  readonly dataDir: string;
  /** The shard's folder. */
  readonly dir: string;
  readonly shard: number;
  readonly syncKind: SyncKind;
  readonly segmentBytes: number;
  readonly preallocate: boolean;
  readonly mode: RecoveryMode;
  readonly repair: boolean;
  /** The framing of the directory's format. */
  readonly framing: Framing;
  readonly scheduler: CommitScheduler;
  /** Told of every entry and tombstone recovery keeps. */
  readonly visitor?: RecoveryVisitor | undefined;
}

/** Bytes read around an entry by `read`; neighbouring entries of a stream often share the window. */
const READ_WINDOW = 32 * 1024;

/**
 * One shard of a local log: its segments, stream index and committer. Appends go to the last
 * segment; everything before it is sealed.
 */
export class Shard implements CommitTarget {
  readonly index = new StreamIndex();
  readonly shard: number;
  readonly layer: FileLayer;
  readonly segmentBytes: number;
  readonly events: readonly RecoveryEvent[];
  readonly committer: ShardCommitter | undefined;
  private segments: Segment[];
  private readonly bySeq = new Map<number, Segment>();
  private readonly preallocator: Preallocator | undefined;
  private readonly window = Buffer.allocUnsafe(READ_WINDOW);
  private readonly seal = Buffer.allocUnsafe(SEAL_FRAME_BYTES);
  /** Set once a writer's open completed: from then on it may append, and marks a clean close. */
  private ready = false;

  private constructor(
    private readonly options: ShardOptions,
    segments: Segment[],
    events: RecoveryEvent[],
    index: StreamIndex,
    private readonly plan: ShardPlan,
    lastBatch: number,
  ) {
    const writer = options.mode === "write";
    this.shard = options.shard;
    this.layer = options.layer;
    this.segmentBytes = options.segmentBytes;
    this.index = index;
    this.events = events;
    this.segments = segments;
    for (const s of segments) this.bySeq.set(s.seq, s);
    this.preallocator = !writer || !options.preallocate ? undefined : new Preallocator(options.layer, options.dir, options.segmentBytes);
    this.committer = writer ? new ShardCommitter(this, options.syncKind, options.scheduler, lastBatch + 1) : undefined;
  }

  /**
   * Recovers the shard from disk into memory, writing nothing: what a writer must change (cut a
   * torn tail, remove marks) waits for {@link completeOpen}.
   */
  static prepare(options: ShardOptions): Shard {
    const index = new StreamIndex();
    const recovered = recoverShard({
      layer: options.layer,
      dataDir: options.dataDir,
      dir: options.dir,
      shard: options.shard,
      mode: options.mode,
      repair: options.repair,
      dsync: options.syncKind === SyncKind.DSync,
      framing: options.framing,
      index,
      ...(options.visitor !== undefined ? { visitor: options.visitor } : {}),
    });
    return new Shard(options, recovered.segments, recovered.events, index, recovered.plan, recovered.lastBatch);
  }

  /**
   * Applies what recovery decided and makes sure the shard has a segment to append to: a new one
   * when the newest is sealed, or holds frames without batch headers (then it is sealed first).
   */
  async completeOpen(): Promise<void> {
    const { layer, dir } = this.options;
    try {
      if (layer.readdir(dir) === undefined) {
        layer.mkdir(dir, DIR_MODE);
        layer.syncDir(path.dirname(dir));
      }
      applyShardPlan(layer, dir, this.plan);
      const last = this.segments.at(-1);
      if (last === undefined || last.sealed || this.plan.seal) {
        if (this.preallocator !== undefined) {
          this.preallocator.start(FIRST_SEGMENT_PREALLOCATION);
          await this.preallocator.settle();
        }
        if (last !== undefined && !last.sealed) this.roll();
        else this.addSegment(this.createSegment((last?.seq ?? 0) + 1));
      }
      this.ready = true;
    } catch (err) {
      throw new StorageError(`shard ${this.shard}: could not make ${dir} ready for appends: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  get dir(): string {
    return this.options.dir;
  }

  /** Segments in log order (a copy). */
  list(): Segment[] {
    return [...this.segments];
  }

  active(): Segment {
    const last = this.segments.at(-1);
    if (last === undefined) throw new StorageError(`shard ${this.shard} has no segment`);
    return last;
  }

  /**
   * Seals the active segment (its seal frame synced before anything is written after it, so an
   * older segment without a seal is always damage) and opens the next one, durable in the folder.
   */
  roll(): void {
    const old = this.active();
    encodeSeal(this.seal, 0, old.frames);
    writeFully(this.layer, old.fd, this.seal, 0, SEAL_FRAME_BYTES, old.end);
    if (this.options.syncKind === SyncKind.Data || this.options.syncKind === SyncKind.Full) {
      this.layer.sync(old.fd, this.options.syncKind === SyncKind.Data);
    }
    old.end += SEAL_FRAME_BYTES;
    old.sealed = true;
    // The preallocated zeros past the seal are no longer needed; if this truncation is lost in a
    // crash, recovery stops at the seal anyway.
    if (old.fileSize > old.end) {
      this.layer.truncate(old.fd, old.end);
      old.fileSize = old.end;
    }
    this.addSegment(this.createSegment(old.seq + 1));
  }

  written(segment: Segment): void {
    if (this.preallocator !== undefined && segment.end * 2 >= this.segmentBytes) this.preallocator.start();
  }

  /** The live entries of a stream, read with positioned reads (no scan). */
  read(stream: string): LogEntry[] {
    const positions = this.index.positions(stream);
    return this.readAt(positions, (_) => stream);
  }

  /** The live entries of several streams in log order, read with positioned reads (no scan). */
  readStreams(streams: readonly string[]): LogEntry[] {
    const found: { position: number; stream: string }[] = [];
    for (const stream of new Set(streams)) for (const p of this.index.positions(stream)) found.push({ position: p, stream });
    found.sort((a, b) => a.position - b.position);
    return this.readAt(
      found.map((f) => f.position),
      (i) => found[i]!.stream,
    );
  }

  /** The entries at `positions` (in log order), the `i`th of stream `streamAt(i)`. */
  private readAt(positions: readonly number[], streamAt: (i: number) => string): LogEntry[] {
    const out = new Array<LogEntry>(positions.length);
    const view = new FrameView();
    let seg: Segment | undefined;
    let win: SegmentWindow | undefined;
    for (let i = 0; i < positions.length; i++) {
      const stream = streamAt(i);
      const p = positions[i]!;
      const off = positionOffset(p);
      const s = this.bySeq.get(positionSeq(p));
      if (s === undefined) throw new StorageError(`shard ${this.shard}: the index points at a missing segment`);
      if (s !== seg || win === undefined) {
        seg = s;
        win = new SegmentWindow(this.layer, s.fd, s.end, { windowBytes: READ_WINDOW, buffer: this.window });
      }
      if (!win.frameAt(off, view) || view.kind !== FrameKind.Entry) {
        throw new StorageError(
          `shard ${this.shard}: segment ${s.path} is damaged at offset ${off} (${view.fault ?? "not an entry"}) ` +
            `while reading stream "${stream}"`,
        );
      }
      out[i] = { stream, body: new Uint8Array(win.buf.subarray(view.payloadStart, view.end)) };
    }
    return out;
  }

  /** Yields the live entries in log order; a segment being read is never swapped by compaction. */
  async *scan(): AsyncGenerator<LogEntry> {
    const view = new FrameView();
    for (const seg of this.heldSegments()) {
      const reader = new FrameReader(this.layer, this.shard, seg, 0, seg.end);
      while (reader.next(view)) {
        if (view.kind !== FrameKind.Entry) continue;
        const key = view.key(reader.buf);
        if (!this.index.isLive(key, position(seg.seq, reader.base + view.start))) continue;
        yield { stream: key, body: new Uint8Array(reader.buf.subarray(view.payloadStart, view.end)) };
      }
    }
  }

  /**
   * Yields the live entries in log order, one batch per read window; a batch holds the entries live
   * when it was read. Each window is a buffer of its own, so bodies are views into it rather than
   * copies. A segment being read is never swapped by compaction.
   */
  async *scanBatches(): AsyncGenerator<LogEntry[]> {
    const view = new FrameView();
    for (const seg of this.heldSegments()) {
      const reader = new FrameReader(this.layer, this.shard, seg, 0, seg.end, { freshWindows: true });
      let window = reader.buf;
      let batch: LogEntry[] = [];
      while (reader.next(view)) {
        const buf = reader.buf;
        if (buf !== window) {
          window = buf;
          if (batch.length > 0) {
            yield batch;
            batch = [];
          }
        }
        if (view.kind !== FrameKind.Entry) continue;
        const key = view.key(buf);
        if (this.index.hasDrops && !this.index.isLive(key, position(seg.seq, reader.base + view.start))) continue;
        batch.push({ stream: key, body: buf.subarray(view.payloadStart, view.end) });
      }
      if (batch.length > 0) yield batch;
    }
  }

  /** The segments in log order, each held while the caller reads it, so compaction waits to replace it. */
  private *heldSegments(): Generator<Segment> {
    let lastSeq = 0;
    for (;;) {
      const seg = this.segments.find((s) => s.seq > lastSeq);
      if (seg === undefined) return;
      lastSeq = seg.seq;
      seg.acquire();
      try {
        yield seg;
      } finally {
        seg.release(this.layer);
      }
    }
  }

  /** Replaces a sealed segment by its compacted copy (same sequence number). */
  replaceSegment(old: Segment, replacement: Segment): void {
    const i = this.segments.indexOf(old);
    if (i < 0) throw new StorageError(`shard ${this.shard}: segment ${old.path} is no longer part of the log`);
    this.segments[i] = replacement;
    this.bySeq.set(replacement.seq, replacement);
    old.retire(this.layer);
  }

  /** Removes a sealed segment that holds nothing live. */
  removeSegment(old: Segment): void {
    this.segments = this.segments.filter((s) => s !== old);
    this.bySeq.delete(old.seq);
    old.retire(this.layer);
  }

  bytes(): number {
    let n = 0;
    for (const s of this.segments) n += s.end;
    return n;
  }

  /**
   * Waits for pending appends and background work, then closes every file. A writer whose open
   * completed marks where its data ends; one whose open never completed leaves the folder untouched.
   */
  async close(): Promise<void> {
    await this.committer?.idle();
    await this.preallocator?.settle();
    const last = this.segments.at(-1);
    if (this.ready && this.committer?.failure === undefined && last !== undefined && !last.sealed) {
      try {
        writeCleanMark(this.layer, this.options.dir, { segment: last.seq, end: last.end });
      } catch {
        // Without the mark the next open reads the segment's tail, as after a crash.
      }
    }
    this.closeFiles();
  }

  private closeFiles(): void {
    for (const s of this.segments) s.retire(this.layer);
    this.segments = [];
    this.bySeq.clear();
  }

  private addSegment(segment: Segment): void {
    this.segments.push(segment);
    this.bySeq.set(segment.seq, segment);
  }

  /** Creates segment `seq` from the prepared file when one is ready, else empty; syncs the folder. */
  private createSegment(seq: number): Segment {
    const { layer, dir } = this.options;
    const file = path.join(dir, segmentName(seq));
    const prepared = this.preallocator?.take();
    if (prepared !== undefined) layer.rename(prepared, file);
    else layer.close(layer.open(file, "create", FILE_MODE));
    layer.syncDir(dir);
    const fd = layer.open(file, "write", FILE_MODE, this.options.syncKind === SyncKind.DSync);
    return new Segment(seq, file, fd, 0, 0, false, layer.size(fd));
  }
}
