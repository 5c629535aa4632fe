import { StorageError } from "../core/errors.js";
import type { FileLayer } from "./file-layer.js";
import type { FrameView } from "./frame.js";
import type { Segment } from "./segment.js";
import { SegmentWindow, type SegmentWindowOptions } from "./segment-window.js";

const CHUNK = 1024 * 1024;

/**
 * Reads the frames of a segment range in order through a 1 MiB window, checking each checksum.
 * Recovery has validated the range already, so a failure here is damage that happened since the
 * log was opened; it is reported, never skipped.
 */
export class FrameReader {
  private readonly window: SegmentWindow;
  private offset: number;

  constructor(
    layer: FileLayer,
    private readonly shard: number,
    private readonly segment: Segment,
    start: number,
    private readonly end: number,
    options: Pick<SegmentWindowOptions, "freshWindows"> = {},
  ) {
    this.offset = start;
    this.window = new SegmentWindow(layer, segment.fd, end, { windowBytes: CHUNK, ...options });
  }

  /** Holds the current frame; `view` offsets index into it. */
  get buf(): Buffer {
    return this.window.buf;
  }

  /** File offset of `buf[0]`. */
  get base(): number {
    return this.window.base;
  }

  /** Decodes the next frame into `view`; false at the end of the range. */
  next(view: FrameView): boolean {
    if (this.offset >= this.end) return false;
    if (!this.window.frameAt(this.offset, view)) {
      throw new StorageError(
        `shard ${this.shard}: segment ${this.segment.path} is damaged at offset ${this.offset} ` +
          `(${view.fault}) although it was intact when the log was opened`,
      );
    }
    this.offset = this.window.base + view.end;
    return true;
  }
}
