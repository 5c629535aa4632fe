/*
 * The batch header: the first frame of every write the group committer makes (format 2 on).
 *
 *   frame of kind Batch, empty key, payload = u32le bytes of the frames after it in this write
 *                                           | u32le, u32le low and high half of the batch number
 *
 * A write and the sync after it make one batch durable; the next batch is written only after that
 * sync returned, and batch numbers of a shard grow by one each time. So after a power loss at most
 * the last batch can be torn, in whatever order its pages reached the disk, and a valid header of a
 * later batch behind a fault proves the fault lies in data that was synced: that is damage, not a
 * torn write. The header's length tells where a torn batch ends, so recovery cuts it whole.
 */
import { crc32c } from "./crc32c.js";
import { BODY_PREFIX_BYTES, FrameKind, type FrameView, HEADER_BYTES, readFrame } from "./frame.js";

const PAYLOAD_BYTES = 12;
const BODY_BYTES = BODY_PREFIX_BYTES + PAYLOAD_BYTES;
/** Bytes of a batch header frame. */
export const BATCH_FRAME_BYTES = HEADER_BYTES + BODY_BYTES;
const HIGH = 2 ** 32;

/** Writes the header of batch `batch`, followed by `bytes` bytes of frames, at `offset`. */
export function encodeBatchHeader(buf: Buffer, offset: number, batch: number, bytes: number): void {
  const body = offset + HEADER_BYTES;
  buf[body] = FrameKind.Batch;
  buf.writeUInt16LE(0, body + 1);
  buf.writeUInt32LE(bytes, body + 3);
  buf.writeUInt32LE(batch % HIGH, body + 7);
  buf.writeUInt32LE(Math.floor(batch / HIGH), body + 11);
  buf.writeUInt32LE(BODY_BYTES, offset);
  buf.writeUInt32LE(crc32c(buf, body, body + BODY_BYTES), offset + 4);
}

/** The number of the batch whose header `view` holds. */
export function batchNumber(buf: Buffer, view: FrameView): number {
  return buf.readUInt32LE(view.payloadStart + 8) * HIGH + buf.readUInt32LE(view.payloadStart + 4);
}

/** Bytes of the batch's frames after its header. */
export function batchBytes(buf: Buffer, view: FrameView): number {
  return buf.readUInt32LE(view.payloadStart);
}

/**
 * The first offset in `[from, limit)` of `buf` where a valid header of a batch numbered above
 * `after` starts, or -1. Only such a header counts as proof of a later write: a frame found inside
 * a payload would need a valid checksum, the exact header length and a number in range.
 */
export function findLaterBatch(buf: Buffer, from: number, limit: number, after: number, view: FrameView): number {
  for (let o = Math.max(0, from); o + BATCH_FRAME_BYTES <= limit; o++) {
    if (buf[o] !== BODY_BYTES || buf[o + HEADER_BYTES] !== FrameKind.Batch || buf.readUInt32LE(o) !== BODY_BYTES) continue;
    if (readFrame(buf, o, limit, view) && view.kind === FrameKind.Batch && batchNumber(buf, view) > after) return o;
  }
  return -1;
}
