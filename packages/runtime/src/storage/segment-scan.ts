import { StorageError } from "../core/errors.js";
import { batchBytes, batchNumber } from "./batch-frame.js";
import { type FrameFault, FrameKind, FrameView, sealedFrameCount } from "./frame.js";
import type { RecoveryVisitor } from "./recovery-visitor.js";
import type { SegmentWindow } from "./segment-window.js";
import { type StreamIndex, position } from "./stream-index.js";

/**
 * How a segment's frames are grouped: `"batches"` (format 2 on), each write opening with a batch
 * header, or `"frames"` (format 1), every frame on its own.
 */
export type Framing = "batches" | "frames";

/** Why a scan stopped before the end of a segment's data. */
export type ScanFault = FrameFault | "not-a-batch" | "overrun" | "batch-order" | "seal-count";

/** Where a scan stopped short, and what recovery needs to judge it. */
export interface ScanStop {
  readonly fault: ScanFault;
  /** Offset of the frame that could not be read. */
  readonly at: number;
  /** Offset of the first byte not kept: the start of the batch holding the fault, or the frame itself. */
  readonly cut: number;
  /** Where a later write would show: after the batch when its header gave its length. */
  readonly after: number;
  /** Only a header of a batch numbered above this proves a later write (0: any batch header). */
  readonly batch: number;
  /** A fault that no torn write leaves behind (a seal with a wrong count, batches out of order). */
  readonly certain: boolean;
}

/** What a scan of one segment found. */
export interface SegmentScan {
  readonly framing: Framing;
  /** Offset after the last whole batch (or frame) read, where the segment is cut if it stopped short. */
  readonly end: number;
  /** Entries and tombstones before `end`. */
  readonly frames: number;
  readonly sealed: boolean;
  /** Number of the last whole batch before `end`, or 0. */
  readonly lastBatch: number;
  readonly stop: ScanStop | undefined;
}

/** Where a scan begins: the start of the segment, or where an earlier scan stopped. */
export interface ScanFrom {
  readonly framing: Framing;
  readonly end: number;
  readonly frames: number;
  readonly lastBatch: number;
}

export interface ScanInput {
  readonly seq: number;
  /** Receives the entries and tombstones of every whole batch, in order. */
  readonly index: StreamIndex;
  /** The framing of the directory's format; the segment's first frame may say otherwise. */
  readonly framing: Framing;
  /**
   * The clean-close mark's end: past it nothing was written, so a zero header there ends the data
   * without reading the zeros after it.
   */
  readonly stopAt?: number;
  readonly from?: ScanFrom;
  /** Told of every entry and tombstone the index receives, with the shard's number. */
  readonly visitor?: { readonly shard: number; readonly visitor: RecoveryVisitor };
}

/**
 * Reads a segment's frames in order, adding whole batches to the index, up to the end of its data
 * (a seal, zeros to the end of the file or from `stopAt` on, the end of the file) or the first frame
 * that cannot be read. A batch's entries reach the index only once the whole batch was read, so a torn
 * batch leaves no trace there.
 */
export function scanSegment(win: SegmentWindow, input: ScanInput): SegmentScan {
  const { index, seq } = input;
  const visitor = input.visitor?.visitor;
  const shard = input.visitor?.shard ?? 0;
  const view = new FrameView();
  const keys: string[] = [];
  const offs: number[] = [];
  // Where a batch's bodies lie in the window, told only once the whole batch was read.
  const starts: number[] = [];
  const ends: number[] = [];
  let framing = input.from?.framing ?? input.framing;
  let off = input.from?.end ?? 0;
  let frames = input.from?.frames ?? 0;
  let lastBatch = input.from?.lastBatch ?? 0;
  const result = (sealed: boolean, stop?: ScanStop): SegmentScan => ({ framing, end: off, frames, sealed, lastBatch, stop });
  const stopped = (fault: ScanFault, at: number, cut: number, after: number, batch: number, certain = false) =>
    result(false, { fault, at, cut, after, batch, certain });

  for (;;) {
    if (off >= win.size) return result(false);
    if (!win.frameAt(off, view)) {
      if (view.fault === "zero" && (off === input.stopAt || win.zeroFrom(off))) return result(false);
      return stopped(view.fault!, off, off, off + 1, lastBatch);
    }
    if (off === 0 && input.from === undefined && view.kind !== FrameKind.Seal) {
      // A segment keeps the rules it was written under, whatever the directory's format says now.
      framing = view.kind === FrameKind.Batch ? "batches" : "frames";
    }
    if (view.kind === FrameKind.Seal) {
      if (sealedFrameCount(win.buf, view) !== frames) return stopped("seal-count", off, off, off + 1, lastBatch, true);
      off = win.base + view.end;
      return result(true);
    }
    if (framing === "frames") {
      if (view.kind === FrameKind.Entry) {
        const key = view.key(win.buf);
        index.add(key, position(seq, off));
        visitor?.entry(shard, key, win.buf.subarray(view.payloadStart, view.end));
      } else if (view.kind === FrameKind.Drop) {
        const key = view.key(win.buf);
        index.drop(key);
        visitor?.dropped(shard, key);
      }
      if (view.kind !== FrameKind.Batch) frames += 1;
      off = win.base + view.end;
      continue;
    }
    if (view.kind !== FrameKind.Batch) return stopped("not-a-batch", off, off, off + 1, lastBatch);
    const batch = batchNumber(win.buf, view);
    if (lastBatch !== 0 && batch !== lastBatch + 1) return stopped("batch-order", off, off, off + 1, lastBatch, true);
    let at = win.base + view.end;
    const batchEnd = at + batchBytes(win.buf, view);
    // The bodies told are views into the window: the whole batch is read in before its frames, so
    // the window stays put until they were told.
    if (visitor !== undefined) win.hold(off, batchEnd - off);
    const buf = win.buf;
    const base = win.base;
    let count = 0;
    while (at < batchEnd) {
      if (!win.frameAt(at, view)) return stopped(view.fault!, at, off, batchEnd, batch);
      const end = win.base + view.end;
      if (!holdsRecord(view) || end > batchEnd) {
        return stopped("overrun", at, off, batchEnd, batch);
      }
      keys[count] = view.key(win.buf);
      offs[count] = isDrop(view) ? ~at : at;
      starts[count] = view.payloadStart;
      ends[count] = view.end;
      count += 1;
      at = end;
    }
    if (visitor === undefined) {
      for (let i = 0; i < count; i++) {
        const o = offs[i]!;
        if (o >= 0) index.add(keys[i]!, position(seq, o));
        else index.drop(keys[i]!);
      }
    } else {
      if (win.buf !== buf || win.base !== base) {
        throw new StorageError(`shard ${shard}: recovery's read window moved within the batch at offset ${off} of segment ${seq}`);
      }
      for (let i = 0; i < count; i++) {
        const o = offs[i]!;
        if (o >= 0) {
          index.add(keys[i]!, position(seq, o));
          visitor.entry(shard, keys[i]!, buf.subarray(starts[i], ends[i]));
        } else {
          index.drop(keys[i]!);
          visitor.dropped(shard, keys[i]!);
        }
      }
    }
    frames += count;
    lastBatch = batch;
    off = batchEnd;
  }
}

/** Whether a frame read inside a batch is an entry or a tombstone, as every frame there must be. */
function holdsRecord(view: FrameView): boolean {
  return view.kind === FrameKind.Entry || view.kind === FrameKind.Drop;
}

function isDrop(view: FrameView): boolean {
  return view.kind === FrameKind.Drop;
}

const WHAT: Record<ScanFault, string> = {
  short: "a frame runs past the end of the file",
  zero: "a zero header is followed by non-zero bytes",
  length: "a frame has an impossible length",
  checksum: "a frame fails its checksum",
  layout: "a frame body is malformed",
  "not-a-batch": "a batch header is missing",
  overrun: "a frame does not fit the batch its header describes",
  "batch-order": "a batch header is out of order",
  "seal-count": "the seal frame's count does not match the frames before it",
};

/** A sentence saying what is wrong at a scan's stop. */
export function describeStop(stop: ScanStop): string {
  const where = stop.cut === stop.at ? "" : ` of the batch starting at offset ${stop.cut}`;
  return `${WHAT[stop.fault]} at offset ${stop.at}${where}`;
}
