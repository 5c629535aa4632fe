import path from "node:path";
import type * as Support from "../../packages/runtime/test/storage/support/memory-file-layer.js";

// The runtime's in-memory file layer is test support, not part of its package: loaded from its build
// output, whose place relative to this file's differs between the source and the build.
const support = (await import(
  new URL("../../../packages/runtime/dist/test/storage/support/memory-file-layer.js", import.meta.url).href
)) as typeof Support;
const { MemoryFileLayer, Random } = support;
type MemoryFileLayer = Support.MemoryFileLayer;
type Random = Support.Random;

const SEGMENT = /^\d{12}\./;

/**
 * The simulated disk under one engine: a {@link MemoryFileLayer} (which knows what is durable and
 * builds the image a power loss would leave), plus the two faults the simulation places: a power
 * loss at a chosen count of file operations, and a failed sync of a log segment.
 */
export class SimDisk {
  private readonly paths = new Map<number, string>();
  /** Fail the next sync of a log segment (not of a directory or a preallocated file). */
  failNextSegmentSync = false;
  /** Set when the armed sync failure happened. */
  syncFailed = false;

  constructor(readonly layer: MemoryFileLayer) {
    const open = layer.open.bind(layer);
    layer.open = (file, mode, perm, dsync) => {
      const fd = open(file, mode, perm, dsync);
      this.paths.set(fd, file);
      return fd;
    };
    // The layer's asynchronous sync calls this one too.
    const sync = layer.sync.bind(layer);
    layer.sync = (fd) => {
      this.arm(fd);
      sync(fd);
    };
  }

  static empty(dir: string): SimDisk {
    const layer = new MemoryFileLayer();
    layer.mkdirDurable(dir);
    return new SimDisk(layer);
  }

  get ops(): number {
    return this.layer.ops;
  }

  /** Calls `fn` (synchronously, inside the file operation) when the count of operations reaches `count`. */
  onOp(count: number, fn: () => void): void {
    this.layer.onOp = (n) => {
      if (n < count) return;
      this.layer.onOp = undefined;
      fn();
    };
  }

  disarm(): void {
    this.layer.onOp = undefined;
    this.failNextSegmentSync = false;
  }

  /** What a power loss right now would leave. */
  crashImage(rng: Random): SimDisk {
    return new SimDisk(this.layer.crashImage(rng));
  }

  private arm(fd: number): void {
    if (!this.failNextSegmentSync) return;
    const file = this.paths.get(fd);
    if (file === undefined || !SEGMENT.test(path.basename(file))) return;
    this.failNextSegmentSync = false;
    this.syncFailed = true;
    this.layer.failNextSync = true;
  }
}

export { Random };
export type { MemoryFileLayer };
