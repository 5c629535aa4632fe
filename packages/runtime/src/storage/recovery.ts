import path from "node:path";
import { StorageError } from "../core/errors.js";
import { findLaterBatch } from "./batch-frame.js";
import { type CleanMark, findCleanMark, isCleanMark } from "./clean-mark.js";
import type { FileLayer } from "./file-layer.js";
import { FrameView, readFrame } from "./frame.js";
import type { ShardPlan, ZeroRange } from "./recovery-plan.js";
import { type Framing, type SegmentScan, type ScanStop, describeStop, scanSegment } from "./segment-scan.js";
import { SegmentWindow, isZero } from "./segment-window.js";
import { COMPACT_SUFFIX, FILE_MODE, PREPARED_NAME, Segment, parseSegmentName, segmentName } from "./segment.js";
import type { RecoveryVisitor } from "./recovery-visitor.js";
import type { StreamIndex } from "./stream-index.js";

/** Something recovery found and did about it; a log reports every one, nothing is dropped unsaid. */
export interface RecoveryEvent {
  readonly shard: number;
  /** Path of the segment file. */
  readonly segment: string;
  /** Offset of the first byte that was not kept. */
  readonly offset: number;
  /**
   * `"torn-tail"`: the last write never finished before a crash and is left out: a writer zeroes it,
   * a read-only open with no writer beside it only reads around it. `"incomplete-tail"`: a read-only
   * open stopped at a write its running writer may still be making. `"repaired"`: corruption was cut
   * off because of `repair`, with everything after it.
   */
  readonly kind: "torn-tail" | "incomplete-tail" | "repaired";
  /** Bytes that held data and were discarded (or, read-only, left out). */
  readonly discardedBytes: number;
  readonly reason: string;
}

/**
 * Who opens a shard: its writer, a reader while no writer holds the directory, or a reader beside a
 * running writer (whose last write may be under way, so an incomplete tail is no damage).
 */
export type RecoveryMode = "write" | "read" | "read-beside-writer";

export interface RecoveryInput {
  readonly layer: FileLayer;
  /** The data directory, named in the advice of errors. */
  readonly dataDir: string;
  /** The shard's folder. */
  readonly dir: string;
  readonly shard: number;
  readonly mode: RecoveryMode;
  readonly repair: boolean;
  readonly dsync: boolean;
  /** The framing of the directory's format, for segments whose first frame cannot tell. */
  readonly framing: Framing;
  /** Filled with the live entries found. */
  readonly index: StreamIndex;
  /** Told of every entry and tombstone kept, in log order. */
  readonly visitor?: RecoveryVisitor;
}

export interface RecoveredShard {
  /** Segments in order; the writer appends to the last unless it is sealed. */
  readonly segments: Segment[];
  readonly events: RecoveryEvent[];
  /** What a writer changes once the open succeeds; nothing for a read-only open. */
  readonly plan: ShardPlan;
  /** The highest batch number read, so the writer's next batch is numbered after it. */
  readonly lastBatch: number;
}

/**
 * Reads a shard's segments in order, rebuilding its stream index, and decides what a bad frame is.
 * It writes nothing: what a writer must change is returned as a plan.
 *
 * - The newest segment may end in a torn write: a batch that was never synced, recognized by its
 *   batch header (see `batch-frame.ts`) or, in a segment of format 1, by nothing valid following.
 *   It is cut whole, at the start of the batch, and reported.
 * - Anything else is corruption: a fault followed by a later batch, damage in an older segment, an
 *   older segment without its seal, and, after a clean close, data ending before the clean-close
 *   mark or a mark naming another segment than the newest. It is a `StorageError` naming shard,
 *   file and offset, unless `repair` cuts the shard there. Nothing is ever skipped over.
 * - A zero header followed only by zeros is the end of a preallocated segment, not damage.
 */
export function recoverShard(input: RecoveryInput): RecoveredShard {
  const { layer, dir, shard } = input;
  const writing = input.mode === "write";
  const names = layer.readdir(dir) ?? [];
  const seqs = names
    .map(parseSegmentName)
    .filter((s): s is number => s !== undefined)
    .sort((a, b) => a - b);
  const events: RecoveryEvent[] = [];
  const clean = findCleanMark(names);
  let markEnd: number | undefined;
  if (clean !== undefined) {
    if (clean.segment === seqs.at(-1)) markEnd = clean.end;
    else if (input.repair && writing) events.push(misplacedMarkRepaired(input, clean, seqs));
    else throw misplacedMark(input, clean, seqs);
  }
  const segments: Segment[] = [];
  let zero: ZeroRange | undefined;
  let dropped: string[] = [];
  let lastBatch = 0;
  let framing = input.framing;
  try {
    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i]!;
      const file = path.join(dir, segmentName(seq));
      const newest = i === seqs.length - 1;
      let fd: number;
      try {
        fd = layer.open(file, writing ? "write" : "read", FILE_MODE, input.dsync && writing);
      } catch (err) {
        // Beside a running writer, compaction may delete a segment that held nothing live.
        if (!writing && (err as NodeJS.ErrnoException).code === "ENOENT" && !newest) continue;
        throw err;
      }
      const segment = new Segment(seq, file, fd, 0, 0, false, layer.size(fd));
      segments.push(segment);
      const { scan, verdict } = judgeSegment(input, segment, newest, newest ? markEnd : undefined);
      segment.end = scan.end;
      segment.frames = scan.frames;
      segment.sealed = scan.sealed;
      lastBatch = Math.max(lastBatch, scan.lastBatch);
      framing = scan.framing;
      if (verdict === undefined) continue;

      const damageEnd = verdict.dataEnd ?? scan.end + dataBytes(layer, segment, scan.end);
      if (verdict.kind === "tail") {
        events.push({
          shard,
          segment: file,
          offset: scan.end,
          kind: input.mode === "read-beside-writer" ? "incomplete-tail" : "torn-tail",
          discardedBytes: damageEnd - scan.end,
          reason: verdict.reason,
        });
        if (writing) zero = { segment, from: scan.end, to: damageEnd };
        continue;
      }
      const later = seqs.slice(i + 1).map((s) => path.join(dir, segmentName(s)));
      const discarded = damageEnd - scan.end + later.reduce((n, f) => n + sizeOf(layer, f), 0);
      if (!input.repair || !writing) {
        throw new StorageError(
          `shard ${shard}: segment ${file} is corrupt: ${verdict.reason}; the log was not opened. To cut the shard at offset ` +
            `${scan.end}, discarding ${discarded} bytes of this segment${later.length > 0 ? ` and the ${later.length} after it` : ""}, ` +
            `run \`fusee repair --data ${input.dataDir}\` or open the engine once with Config.local(${JSON.stringify(input.dataDir)}).repair()`,
        );
      }
      events.push({ shard, segment: file, offset: scan.end, kind: "repaired", discardedBytes: discarded, reason: verdict.reason });
      zero = { segment, from: scan.end, to: damageEnd };
      dropped = later.reverse();
      segment.sealed = false;
      break;
    }
  } catch (err) {
    for (const s of segments) layer.close(s.fd);
    throw err;
  }
  const last = segments.at(-1);
  const strays = writing ? names.filter((n) => n === PREPARED_NAME || n.endsWith(COMPACT_SUFFIX) || isCleanMark(n)) : [];
  const seal = writing && framing === "frames" && last !== undefined && !last.sealed && last.end > 0;
  return { segments, events, plan: { strays, dropped, zero, seal }, lastBatch };
}

/** How a segment's scan ended, when not at the end of its data; `dataEnd` is known once its rest was read. */
type Verdict = { readonly kind: "tail" | "corrupt"; readonly reason: string; readonly dataEnd?: number } | undefined;

/** Scans a segment and judges where it stopped: its end, a torn tail, or corruption. */
function judgeSegment(
  input: RecoveryInput,
  segment: Segment,
  newest: boolean,
  markEnd: number | undefined,
): { scan: SegmentScan; verdict: Verdict } {
  const { layer, index } = input;
  const view = new FrameView();
  const visitor = input.visitor === undefined ? undefined : { shard: input.shard, visitor: input.visitor };
  let win = new SegmentWindow(layer, segment.fd, segment.fileSize, { windowBytes: WINDOW });
  let scan = scanSegment(win, { seq: segment.seq, index, framing: input.framing, stopAt: markEnd, ...(visitor && { visitor }) });
  for (;;) {
    const stop = scan.stop;
    const closedAt = markEnd === undefined ? "" : `, but the shard was closed cleanly with its data ending at offset ${markEnd}`;
    if (stop === undefined) {
      if (!scan.sealed && !newest) {
        return {
          scan,
          verdict: { kind: "corrupt", reason: `the segment ends at offset ${scan.end} without its seal although newer segments exist` },
        };
      }
      if (markEnd !== undefined && scan.end < markEnd) {
        return { scan, verdict: { kind: "corrupt", reason: `its data ends at offset ${scan.end}${closedAt}` } };
      }
      return { scan, verdict: undefined };
    }
    const what = describeStop(stop);
    if (!newest || stop.certain) return { scan, verdict: { kind: "corrupt", reason: what } };
    if (markEnd !== undefined && stop.cut < markEnd) return { scan, verdict: { kind: "corrupt", reason: `${what}${closedAt}` } };
    const rest = win.rest(stop.cut);
    const dataEnd = stop.cut + lastNonZero(rest, 0, rest.length);
    const proof = findProof(rest, stop, scan.framing, view);
    if (proof < 0) return { scan, verdict: { kind: "tail", reason: tornReason(stop, scan.framing), dataEnd } };
    if (input.mode !== "write") {
      // A reader may have read a batch while its writer was still writing it and then found the
      // next one: the batch was complete before the next began, so read again it must be whole.
      // Each pass that goes on gets further into the segment, so the passes end.
      win = new SegmentWindow(layer, segment.fd, layer.size(segment.fd), { windowBytes: WINDOW });
      const again = scanSegment(win, {
        seq: segment.seq,
        index,
        framing: scan.framing,
        stopAt: markEnd,
        from: scan,
        ...(visitor && { visitor }),
      });
      if (again.end > scan.end || again.stop === undefined) {
        scan = again;
        continue;
      }
    }
    const later = scan.framing === "batches" ? "a later batch" : "a valid frame";
    return { scan, verdict: { kind: "corrupt", reason: `${what}, and ${later} follows at offset ${stop.cut + proof}`, dataEnd } };
  }
}

function tornReason(stop: ScanStop, framing: Framing): string {
  const written = framing === "batches" ? "no later batch follows" : "nothing valid follows";
  return `${describeStop(stop)} and ${written}: the last write did not finish before a crash`;
}

/** Where, relative to `rest` (the segment from the cut on), proof of a later write starts; -1 for none. */
function findProof(rest: Buffer, stop: ScanStop, framing: Framing, view: FrameView): number {
  const from = stop.after - stop.cut;
  return framing === "batches" ? findLaterBatch(rest, from, rest.length, stop.batch, view) : findValidFrame(rest, from, rest.length, view);
}

function misplacedMark(input: RecoveryInput, clean: CleanMark, seqs: readonly number[]): StorageError {
  return new StorageError(
    `shard ${input.shard}: ${markProblem(input, clean, seqs)}; segments were lost or restored from another copy, so the log was not opened`,
  );
}

function misplacedMarkRepaired(input: RecoveryInput, clean: CleanMark, seqs: readonly number[]): RecoveryEvent {
  const segment = path.join(input.dir, segmentName(clean.segment));
  return {
    shard: input.shard,
    segment,
    offset: clean.end,
    kind: "repaired",
    discardedBytes: 0,
    reason: `${markProblem(input, clean, seqs)}; the mark was ignored`,
  };
}

function markProblem(input: RecoveryInput, clean: CleanMark, seqs: readonly number[]): string {
  const named = path.join(input.dir, segmentName(clean.segment));
  const newest = seqs.at(-1);
  const found = newest === undefined ? "the shard has no segment" : `the newest segment is ${path.join(input.dir, segmentName(newest))}`;
  const state = seqs.includes(clean.segment) ? "is not the newest" : "is missing";
  return `the shard was closed cleanly with its data ending in segment ${named} at offset ${clean.end}, but that segment ${state} (${found})`;
}

/** Bytes from `from` up to the last non-zero byte of the segment file. */
function dataBytes(layer: FileLayer, segment: Segment, from: number): number {
  const win = new SegmentWindow(layer, segment.fd, layer.size(segment.fd), { windowBytes: WINDOW });
  const rest = win.rest(from);
  return lastNonZero(rest, 0, rest.length);
}

function sizeOf(layer: FileLayer, file: string): number {
  const fd = layer.open(file, "read", FILE_MODE);
  try {
    return layer.size(fd);
  } finally {
    layer.close(fd);
  }
}

/** Bytes recovery reads at a time: whole segments (64 MiB of mostly preallocated zeros) cost more to map than to scan. */
const WINDOW = 4 * 1024 * 1024;

const BLOCK = 4096;

/** Offset after the last non-zero byte in `[start, end)`, or `start` when all are zero. */
function lastNonZero(buf: Buffer, start: number, end: number): number {
  let hi = end;
  while (hi > start) {
    const lo = Math.max(start, hi - BLOCK);
    if (!isZero(buf, lo, hi)) {
      for (let i = hi - 1; i >= lo; i--) if (buf[i] !== 0) return i + 1;
    }
    hi = lo;
  }
  return start;
}

/**
 * The first offset in `[from, limit)` where a valid frame starts, or -1: proof of a later write in a
 * segment of format 1. Frames are not aligned, so every offset is a candidate; all-zero blocks are
 * skipped (a frame's length field is never zero, so at most its last three bytes can start one).
 */
function findValidFrame(buf: Buffer, from: number, limit: number, view: FrameView): number {
  for (let o = from; o + 8 <= limit;) {
    if (o % BLOCK === 0 && o + BLOCK <= limit && isZero(buf, o, o + BLOCK)) {
      o += BLOCK - 3;
      continue;
    }
    const length = buf.readUInt32LE(o);
    if (length >= 3 && o + 8 + length <= limit && readFrame(buf, o, limit, view)) return o;
    o += 1;
  }
  return -1;
}
