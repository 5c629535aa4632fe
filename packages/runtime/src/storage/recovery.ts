import path from "node:path";
import { StorageError } from "../core/errors.js";
import { type CleanMark, findCleanMark, removeCleanMarks } from "./clean-mark.js";
import { type FileLayer, readFully, writeFully } from "./file-layer.js";
import { type FrameFault, FrameKind, FrameView, readFrame, sealedFrameCount } from "./frame.js";
import { SegmentWindow, isZero } from "./segment-window.js";
import { COMPACT_SUFFIX, FILE_MODE, PREPARED_NAME, Segment, parseSegmentName, segmentName } from "./segment.js";
import { type StreamIndex, position } from "./stream-index.js";

/** Something recovery found and did about it; a log reports every one, nothing is dropped unsaid. */
export interface RecoveryEvent {
  readonly shard: number;
  /** Path of the segment file. */
  readonly segment: string;
  /** Offset of the first byte that was not kept. */
  readonly offset: number;
  /**
   * `"torn-tail"`: an incomplete last write was cut off (zeroed). `"incomplete-tail"`: a read-only
   * open stopped there and changed nothing. `"repaired"`: corruption was cut because of
   * `repair: true`, with everything after it.
   */
  readonly kind: "torn-tail" | "incomplete-tail" | "repaired";
  /** Bytes that held data and were discarded (or, read-only, ignored). */
  readonly discardedBytes: number;
  readonly reason: string;
}

export interface RecoveryInput {
  readonly layer: FileLayer;
  /** The shard's folder. */
  readonly dir: string;
  readonly shard: number;
  readonly readOnly: boolean;
  readonly repair: boolean;
  readonly dsync: boolean;
  /** Filled with the live entries found. */
  readonly index: StreamIndex;
}

export interface RecoveredShard {
  /** Segments in order; the writer appends to the last unless it is sealed. */
  readonly segments: Segment[];
  readonly events: RecoveryEvent[];
}

type Fault = FrameFault | "unsealed" | "seal-count" | "before-mark";

/**
 * Reads a shard's segments in order, rebuilding its stream index, and decides what a bad frame is.
 *
 * - The newest segment may end in a torn write (a short or failing frame with nothing valid after
 *   it): the writer zeroes it and goes on; a read-only open stops there.
 * - Anything else (a bad frame followed by a valid one, damage in an older segment, an older
 *   segment without its seal) is corruption: a `StorageError` names shard, file and offset, unless
 *   `repair` cuts the shard there. Nothing is ever skipped over.
 * - A zero header followed only by zeros is the end of a preallocated segment, not damage.
 */
export function recoverShard(input: RecoveryInput): RecoveredShard {
  const { layer, dir, shard, readOnly, index } = input;
  const names = layer.readdir(dir) ?? [];
  const clean = findCleanMark(names);
  if (!readOnly) {
    for (const name of names) {
      if (name === PREPARED_NAME || name.endsWith(COMPACT_SUFFIX)) layer.unlink(path.join(dir, name));
    }
    removeCleanMarks(layer, dir, names);
  }
  const seqs = names
    .map(parseSegmentName)
    .filter((s): s is number => s !== undefined)
    .sort((a, b) => a - b);
  const segments: Segment[] = [];
  const events: RecoveryEvent[] = [];
  const view = new FrameView();
  if (clean !== undefined && clean.segment !== seqs.at(-1)) throw misplacedMark(shard, dir, clean, seqs);
  try {
    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i]!;
      const file = path.join(dir, segmentName(seq));
      const newest = i === seqs.length - 1;
      let fd: number;
      try {
        fd = layer.open(file, readOnly ? "read" : "write", FILE_MODE, input.dsync && !readOnly);
      } catch (err) {
        // Beside a running writer, compaction may delete a segment that held nothing live.
        if (readOnly && (err as NodeJS.ErrnoException).code === "ENOENT" && !newest) continue;
        throw err;
      }
      const size = layer.size(fd);
      segments.push(new Segment(seq, file, fd, 0, 0, false, size));
      const win = new SegmentWindow(layer, fd, size, { windowBytes: WINDOW });

      let off = 0;
      let frames = 0;
      let sealed = false;
      let fault: Fault | undefined;
      while (off < size) {
        if (!win.frameAt(off, view)) {
          fault = view.fault;
          break;
        }
        if (view.kind === FrameKind.Seal) {
          if (sealedFrameCount(win.buf, view) !== frames) fault = "seal-count";
          else sealed = true;
          if (sealed) off = win.base + view.end;
          break;
        }
        const key = view.key(win.buf);
        if (view.kind === FrameKind.Entry) index.add(key, position(seq, off));
        else index.drop(key);
        frames += 1;
        off = win.base + view.end;
      }
      // After a clean close nothing lies past its mark: the zeros there need no reading. Data that
      // ends before the mark was synced and is gone since, which no crash explains.
      const cleanEnd = newest && clean?.segment === seq && clean.end === off;
      if (fault === "zero" && (cleanEnd || win.zeroFrom(off))) fault = undefined;
      if (fault === undefined && !sealed && !newest) fault = "unsealed";
      if (newest && clean !== undefined && off < clean.end) fault ??= "before-mark";

      const segment = segments.at(-1)!;
      segment.end = off;
      segment.frames = frames;
      segment.sealed = sealed;
      if (fault === undefined) continue;

      // Damage is rare: judge it over the rest of the segment read whole.
      const rest = win.rest(off);
      const damageEnd = off + lastNonZero(rest, 0, rest.length);
      const validRel = fault === "unsealed" || fault === "before-mark" ? -1 : findValidFrame(rest, 1, rest.length, view);
      const validAt = validRel < 0 ? -1 : off + validRel;
      const reason = describe(fault, validAt, clean);
      const torn = validAt < 0 && (clean === undefined || off >= clean.end);
      if (newest && (readOnly || torn)) {
        if (!readOnly && damageEnd > off) zeroRange(layer, fd, off, damageEnd);
        events.push({
          shard,
          segment: file,
          offset: off,
          kind: readOnly ? "incomplete-tail" : "torn-tail",
          discardedBytes: damageEnd - off,
          reason,
        });
        continue;
      }
      if (!input.repair || readOnly) {
        let later = 0;
        for (const s of seqs.slice(i + 1)) later += sizeOf(layer, path.join(dir, segmentName(s)));
        throw new StorageError(
          `shard ${shard}: segment ${file} is corrupt at offset ${off} (${reason}); the log was not opened. ` +
            `Open it with repair: true to cut the shard at this offset, discarding ${damageEnd - off + later} bytes`,
        );
      }
      let discarded = damageEnd - off;
      if (damageEnd > off) zeroRange(layer, fd, off, damageEnd);
      for (const s of seqs.slice(i + 1)) {
        const later = path.join(dir, segmentName(s));
        discarded += sizeOf(layer, later);
        layer.unlink(later);
      }
      layer.syncDir(dir);
      events.push({ shard, segment: file, offset: off, kind: "repaired", discardedBytes: discarded, reason });
      break;
    }
  } catch (err) {
    for (const s of segments) layer.close(s.fd);
    throw err;
  }
  return { segments, events };
}

function describe(fault: Fault, validAt: number, clean: CleanMark | undefined): string {
  const what: Record<Fault, string> = {
    "before-mark": "the segment ends here",
    short: "a frame runs past the end of the file",
    zero: "a zero header is followed by non-zero bytes",
    length: "a frame has an impossible length",
    checksum: "a frame fails its checksum",
    layout: "a frame body is malformed",
    "seal-count": "the seal frame's count does not match the frames before it",
    unsealed: "the segment ends without its seal although newer segments exist",
  };
  if (validAt >= 0) return `${what[fault]}, and a valid frame follows at offset ${validAt}`;
  if (clean !== undefined) return `${what[fault]}, but the shard was closed cleanly with its data ending at offset ${clean.end}`;
  return what[fault];
}

/** The refusal of a clean-close mark that names a segment other than the newest. */
function misplacedMark(shard: number, dir: string, clean: CleanMark, seqs: readonly number[]): StorageError {
  const named = path.join(dir, segmentName(clean.segment));
  const newest = seqs.at(-1);
  const found = newest === undefined ? "the shard has no segment" : `the newest segment is ${path.join(dir, segmentName(newest))}`;
  const state = seqs.includes(clean.segment) ? "is not the newest" : "is missing";
  return new StorageError(
    `shard ${shard}: the shard was closed cleanly with its data ending in segment ${named} at offset ${clean.end}, ` +
      `but that segment ${state} (${found}); segments were lost or restored from another copy, so the log was not opened`,
  );
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
 * The first offset in `[from, limit)` where a valid frame starts, or -1. Frames are not aligned,
 * so every offset is a candidate; all-zero blocks are skipped (a frame's length field is never
 * zero, so at most its last three bytes can start one).
 */
function findValidFrame(buf: Buffer, from: number, limit: number, view: FrameView): number {
  for (let o = from; o + 8 <= limit; ) {
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

/** Overwrites `[start, end)` with zeros and syncs, so a later write never sits before stale bytes. */
function zeroRange(layer: FileLayer, fd: number, start: number, end: number): void {
  const zeros = Buffer.alloc(Math.min(end - start, 1024 * 1024));
  for (let at = start; at < end; at += zeros.length) {
    writeFully(layer, fd, zeros, 0, Math.min(zeros.length, end - at), at);
  }
  layer.sync(fd, true);
}
