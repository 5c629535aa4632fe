import { utf8Text } from "../core/buffer-text.js";
import { crc32c } from "./crc32c.js";
import { MAX_ENTRY_BYTES } from "./log.js";

/*
 * A segment is a sequence of frames:
 *
 *   u32le body length | u32le CRC32C of the body | body
 *   body = u8 kind | u16le key length | key (UTF-8) | payload
 *
 * The CRC covers the whole body, so a damaged length field shows up as a checksum failure of the
 * bytes it points at. A body is never empty, so an all-zero header marks the end of the data in a
 * zero-filled (preallocated) segment. Since format 2 the frames of each write are preceded by a
 * batch header frame (see `batch-frame.ts`).
 */

export const HEADER_BYTES = 8;
export const BODY_PREFIX_BYTES = 3;
/** The largest key, in UTF-8 bytes, that the u16 length field holds. */
export const MAX_KEY_BYTES = 0xffff;
/** The largest payload a frame accepts; also bounds what recovery takes for a plausible length. */
export const MAX_PAYLOAD_BYTES = MAX_ENTRY_BYTES;

export const FrameKind = {
  /** An entry of a stream. */
  Entry: 1,
  /** A tombstone: the stream's entries before this frame are dropped. */
  Drop: 2,
  /** The last frame of a sealed segment; its payload is the number of entries and tombstones before it. */
  Seal: 3,
  /** Opens the frames one write put down; see `batch-frame.ts`. */
  Batch: 4,
} as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

/** Upper bound of the bytes a frame takes, to reserve room before encoding. */
export function maxFrameBytes(key: string, payloadBytes: number): number {
  return HEADER_BYTES + BODY_PREFIX_BYTES + key.length * 3 + payloadBytes;
}

/**
 * Encodes one frame at `offset` (the caller reserved {@link maxFrameBytes}) and returns the offset
 * after it. The key is written straight into the buffer, so encoding allocates nothing.
 */
export function encodeFrame(buf: Buffer, offset: number, kind: FrameKind, key: string, payload: Uint8Array | undefined): number {
  const bodyStart = offset + HEADER_BYTES;
  buf[bodyStart] = kind;
  const keyStart = bodyStart + BODY_PREFIX_BYTES;
  const keyBytes = key.length === 0 ? 0 : writeKey(buf, key, keyStart);
  buf[bodyStart + 1] = keyBytes & 0xff;
  buf[bodyStart + 2] = keyBytes >>> 8;
  let end = keyStart + keyBytes;
  if (payload !== undefined && payload.length > 0) {
    buf.set(payload, end);
    end += payload.length;
  }
  writeU32(buf, offset, end - bodyStart);
  writeU32(buf, offset + 4, crc32c(buf, bodyStart, end));
  return end;
}

/**
 * Keys shorter than this are copied a character at a time while they are ASCII: for the short keys
 * of runs (a dozen to a few dozen characters) that costs less than a call into `Buffer.write`.
 */
const ASCII_LOOP_CHARS = 64;

/** Writes `key` as UTF-8 at `at`; returns its bytes. */
function writeKey(buf: Buffer, key: string, at: number): number {
  const n = key.length;
  if (n < ASCII_LOOP_CHARS) {
    let i = 0;
    for (; i < n; i++) {
      const c = key.charCodeAt(i);
      if (c >= 0x80) break;
      buf[at + i] = c;
    }
    if (i === n) return n;
  }
  return buf.write(key, at);
}

/** The bounds of `offset` were reserved by the caller, so the checks of `writeUInt32LE` are not needed. */
function writeU32(buf: Buffer, offset: number, value: number): void {
  buf[offset] = value & 0xff;
  buf[offset + 1] = (value >>> 8) & 0xff;
  buf[offset + 2] = (value >>> 16) & 0xff;
  buf[offset + 3] = value >>> 24;
}

/** Why a frame could not be read at an offset. */
export type FrameFault = "short" | "zero" | "length" | "checksum" | "layout";

/** A decoded frame; one instance is reused across reads to keep scans allocation-free. */
export class FrameView {
  kind: FrameKind = FrameKind.Entry;
  /** Offset of the frame's header. */
  start = 0;
  /** Offset after the frame. */
  end = 0;
  keyStart = 0;
  keyEnd = 0;
  payloadStart = 0;
  /** Set when the frame is unreadable; the other fields are then meaningless. */
  fault: FrameFault | undefined = undefined;

  key(buf: Buffer): string {
    return utf8Text(buf, this.keyStart, this.keyEnd);
  }
}

/**
 * Decodes the frame at `offset` of `buf`, whose valid bytes end at `limit`, into `view`. Returns
 * false (with `view.fault` set) for a short, zero, implausible or corrupt frame.
 */
export function readFrame(buf: Buffer, offset: number, limit: number, view: FrameView): boolean {
  view.start = offset;
  if (limit - offset < HEADER_BYTES) return fail(view, "short");
  const length = buf.readUInt32LE(offset);
  const sum = buf.readUInt32LE(offset + 4);
  if (length === 0) return fail(view, sum === 0 ? "zero" : "length");
  if (length < BODY_PREFIX_BYTES || length > MAX_PAYLOAD_BYTES + BODY_PREFIX_BYTES + MAX_KEY_BYTES) {
    return fail(view, "length");
  }
  const bodyStart = offset + HEADER_BYTES;
  const end = bodyStart + length;
  if (end > limit) return fail(view, "short");
  if (crc32c(buf, bodyStart, end) !== sum) return fail(view, "checksum");
  const kind = buf[bodyStart]!;
  const keyEnd = bodyStart + BODY_PREFIX_BYTES + buf.readUInt16LE(bodyStart + 1);
  if (kind < FrameKind.Entry || kind > FrameKind.Batch || keyEnd > end) return fail(view, "layout");
  view.kind = kind as FrameKind;
  view.end = end;
  view.keyStart = bodyStart + BODY_PREFIX_BYTES;
  view.keyEnd = keyEnd;
  view.payloadStart = keyEnd;
  view.fault = undefined;
  return true;
}

function fail(view: FrameView, fault: FrameFault): false {
  view.fault = fault;
  return false;
}

/** Length of the frame starting at `offset` as its header claims (no validation). */
export function frameLength(buf: Buffer, offset: number): number {
  return HEADER_BYTES + buf.readUInt32LE(offset);
}

/** Bytes of a seal frame. */
export const SEAL_FRAME_BYTES = HEADER_BYTES + BODY_PREFIX_BYTES + 4;

/** Encodes the seal frame that closes a segment holding `frames` frames. */
export function encodeSeal(buf: Buffer, offset: number, frames: number): number {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32LE(frames >>> 0, 0);
  return encodeFrame(buf, offset, FrameKind.Seal, "", payload);
}

/** The frame count a seal frame records. */
export function sealedFrameCount(buf: Buffer, view: FrameView): number {
  return buf.readUInt32LE(view.payloadStart);
}
