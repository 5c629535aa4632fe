import { type FileLayer, readFully } from "./file-layer.js";
import { type FrameView, HEADER_BYTES, frameLength, readFrame } from "./frame.js";

/** Options of {@link SegmentWindow}. */
export interface SegmentWindowOptions {
  /** Bytes read at a time (more when one frame is larger). */
  readonly windowBytes: number;
  /**
   * Reads each window into a new buffer instead of reusing one, so views into earlier windows stay
   * valid after the window moves on.
   */
  readonly freshWindows?: boolean;
  /** A buffer to read into first (a caller's reused one); a frame larger than it gets a buffer of its own. */
  readonly buffer?: Buffer;
}

/**
 * A read window sliding over one segment file up to `size`: frames are decoded where they lie in
 * the window, and the window is read anew from a frame that runs past its end.
 */
export class SegmentWindow {
  buf: Buffer;
  /** File offset of `buf[0]`. */
  base = 0;
  private filled = 0;

  constructor(
    private readonly layer: FileLayer,
    private readonly fd: number,
    /** Bytes of the file the window reads. */
    readonly size: number,
    private readonly options: SegmentWindowOptions,
  ) {
    this.buf = options.buffer ?? Buffer.allocUnsafe(options.windowBytes);
  }

  /**
   * Decodes the frame at file offset `at` into `view` (offsets relative to `buf`), reading further
   * when the frame runs past the window; false with `view.fault` set as {@link readFrame} gives it.
   */
  frameAt(at: number, view: FrameView): boolean {
    let rel = this.load(at, HEADER_BYTES);
    if (readFrame(this.buf, rel, this.filled, view)) return true;
    if (view.fault !== "short" || this.filled - rel < HEADER_BYTES || this.base + this.filled >= this.size) return false;
    rel = this.load(at, frameLength(this.buf, rel));
    return readFrame(this.buf, rel, this.filled, view);
  }

  /**
   * Reads `[at, at + bytes)` (as far as the file goes) into `buf` at once, so frames decoded in that
   * range afterwards all lie in the same buffer and none moves the window.
   */
  hold(at: number, bytes: number): void {
    this.load(at, bytes);
  }

  /** Whether every byte from `at` to the end of the file is zero. */
  zeroFrom(at: number): boolean {
    while (at < this.size) {
      const rel = this.load(at, Math.min(this.options.windowBytes, this.size - at));
      const n = this.filled - rel;
      if (n <= 0) return true;
      if (!isZero(this.buf, rel, rel + n)) return false;
      at += n;
    }
    return true;
  }

  /** The bytes from `at` to the end of the file, in a buffer of their own. */
  rest(at: number): Buffer {
    const out = Buffer.allocUnsafe(Math.max(0, this.size - at));
    return out.subarray(0, readFully(this.layer, this.fd, out, 0, out.length, at));
  }

  /** Makes `[at, at + bytes)` readable (as far as the file goes) and returns `at`'s offset in `buf`. */
  private load(at: number, bytes: number): number {
    if (at >= this.base && at + bytes <= this.base + this.filled) return at - this.base;
    const want = Math.max(0, Math.min(Math.max(this.options.windowBytes, bytes), this.size - at));
    if (this.buf.length < want || (this.options.freshWindows === true && this.filled > 0)) this.buf = Buffer.allocUnsafe(want);
    this.base = at;
    this.filled = readFully(this.layer, this.fd, this.buf, 0, want, at);
    return 0;
  }
}

const BLOCK = 4096;
const ZERO_BLOCK = Buffer.alloc(BLOCK);

/** Whether `buf[start, end)` holds only zero bytes, compared a block at a time. */
export function isZero(buf: Buffer, start: number, end: number): boolean {
  for (let at = start; at < end; at += BLOCK) {
    const n = Math.min(BLOCK, end - at);
    if (ZERO_BLOCK.compare(buf, at, at + n, 0, n) !== 0) return false;
  }
  return true;
}
