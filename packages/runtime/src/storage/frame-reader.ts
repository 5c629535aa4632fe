import { StorageError } from "../core/errors.js";
import { type FileLayer, readFully } from "./file-layer.js";
import { FrameView, HEADER_BYTES, readFrame } from "./frame.js";
import type { Segment } from "./segment.js";

const CHUNK = 1024 * 1024;

/** Options of {@link FrameReader}. */
export interface FrameReaderOptions {
  /**
   * Reads each window into a new buffer instead of reusing one, so views into earlier windows stay
   * valid after `next` moves on.
   */
  readonly freshWindows?: boolean;
}

/**
 * Reads the frames of a segment range in order through a 1 MiB window, checking each checksum.
 * Recovery has validated the range already, so a failure here is damage that happened since the
 * log was opened; it is reported, never skipped.
 */
export class FrameReader {
  /** Holds the current frame; `view` offsets index into it. */
  buf: Buffer = Buffer.allocUnsafe(CHUNK);
  /** File offset of `buf[0]`. */
  base = 0;
  private filled = 0;
  private offset: number;

  constructor(
    private readonly layer: FileLayer,
    private readonly shard: number,
    private readonly segment: Segment,
    start: number,
    private readonly end: number,
    private readonly options: FrameReaderOptions = {},
  ) {
    this.offset = start;
  }

  /** Decodes the next frame into `view`; false at the end of the range. */
  next(view: FrameView): boolean {
    if (this.offset >= this.end) return false;
    let rel = this.offset - this.base;
    if (rel + HEADER_BYTES > this.filled || rel + HEADER_BYTES + this.buf.readUInt32LE(rel) > this.filled) {
      this.refill(HEADER_BYTES);
      rel = 0;
      const need = HEADER_BYTES + this.buf.readUInt32LE(0);
      if (need > this.filled) this.refill(need);
    }
    if (!readFrame(this.buf, rel, this.filled, view)) {
      throw new StorageError(
        `shard ${this.shard}: segment ${this.segment.path} is damaged at offset ${this.offset} ` +
          `(${view.fault}) although it was intact when the log was opened`,
      );
    }
    this.offset = this.base + view.end;
    return true;
  }

  private refill(atLeast: number): void {
    const want = Math.min(Math.max(CHUNK, atLeast), this.end - this.offset);
    if (this.buf.length < want || (this.options.freshWindows === true && this.filled > 0)) this.buf = Buffer.allocUnsafe(want);
    this.base = this.offset;
    this.filled = readFully(this.layer, this.segment.fd, this.buf, 0, want, this.offset);
  }
}
