import path from "node:path";
import type { FileLayer } from "./file-layer.js";

/** Permission bits of every file the log creates. */
export const FILE_MODE = 0o600;
/** Permission bits of the data directory and its folders. */
export const DIR_MODE = 0o700;

const SEGMENT_SUFFIX = ".log";
/** A zero-filled file waiting to become the next segment. */
export const PREPARED_NAME = "next.prep";
/** A compacted copy of a segment before it replaces the original. */
export const COMPACT_SUFFIX = ".compact";

export function segmentName(seq: number): string {
  return `${seq.toString().padStart(12, "0")}${SEGMENT_SUFFIX}`;
}

/** The sequence number of a segment file name, or undefined for other names. */
export function parseSegmentName(name: string): number | undefined {
  if (!/^\d{12}\.log$/.test(name)) return undefined;
  return Number(name.slice(0, 12));
}

export function shardDirName(shard: number): string {
  return `shard-${shard.toString().padStart(4, "0")}`;
}

/**
 * One segment file of a shard. `end` is the durable end of its frames: readers never look past it,
 * and the writer writes the next batch there. A sealed segment ends with a seal frame and is never
 * written again (compaction replaces it whole).
 */
export class Segment {
  /** Scans reading this segment right now; a retired segment closes its file when this drops to 0. */
  private readers = 0;
  private retired = false;
  private waiters: (() => void)[] = [];

  constructor(
    readonly seq: number,
    readonly path: string,
    readonly fd: number,
    public end: number,
    /** Frames before `end`, excluding the seal. */
    public frames: number,
    public sealed: boolean,
    /** Size of the file, larger than `end` when it was preallocated. */
    public fileSize: number,
  ) {}

  get name(): string {
    return path.basename(this.path);
  }

  acquire(): void {
    this.readers += 1;
  }

  release(layer: FileLayer): void {
    this.readers -= 1;
    if (this.readers > 0) return;
    if (this.retired) layer.close(this.fd);
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Resolves when no scan reads this segment; check `unread` again after awaiting. */
  whenUnread(): Promise<void> {
    if (this.readers === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  get unread(): boolean {
    return this.readers === 0;
  }

  /** Takes the segment out of service; its file closes once no scan reads it. */
  retire(layer: FileLayer): void {
    this.retired = true;
    if (this.readers === 0) layer.close(this.fd);
  }
}
