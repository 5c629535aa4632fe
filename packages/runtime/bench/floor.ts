import fs from "node:fs";
import path from "node:path";
import { percentile, round } from "./percentile.js";

/** Latency of the disk's durable write, the figure every durable step is compared with. */
export interface FloorResult {
  readonly p50_us: number;
  readonly p99_us: number;
}

export interface FloorOptions {
  /** Where the file is made (the data directory's disk). */
  readonly dir: string;
  readonly rounds?: number;
  readonly recordBytes?: number;
}

/**
 * The floor: a loop of synchronous write + `fdatasync` of `recordBytes` at consecutive offsets of a
 * file in `dir` that was zero-filled and synced first, so no sync has metadata to journal.
 *
 * @example
 * const { p50_us } = measureFloor({ dir: os.tmpdir(), rounds: 2000 });
 */
export function measureFloor(options: FloorOptions): FloorResult {
  const samples = floorSamples(options);
  return {
    p50_us: round(percentile(samples, samples.length, 0.5)),
    p99_us: round(percentile(samples, samples.length, 0.99)),
  };
}

/** The floor's individual round times in microseconds, for benchmarks that interleave it. */
export function floorSamples(options: FloorOptions): Float64Array {
  const rounds = options.rounds ?? 2000;
  const file = new FloorFile(options);
  try {
    const samples = new Float64Array(rounds);
    for (let i = 0; i < rounds; i++) samples[i] = file.round();
    return samples;
  } finally {
    file.close();
  }
}

/**
 * One floor file, measured a round at a time, so a benchmark can alternate floor rounds with its
 * own operations one by one: on a noisy machine that is the only fair comparison.
 */
export class FloorFile {
  private readonly fd: number;
  private readonly file: string;
  private readonly record: Buffer;
  private readonly rounds: number;
  private next = 0;

  constructor(options: FloorOptions) {
    this.rounds = options.rounds ?? 2000;
    const recordBytes = options.recordBytes ?? 128;
    this.file = path.join(options.dir, `floor-${process.pid}-${Math.random().toString(36).slice(2)}.bin`);
    this.fd = fs.openSync(this.file, "w+", 0o600);
    const size = this.rounds * recordBytes;
    const zeros = Buffer.alloc(Math.min(size, 1024 * 1024));
    for (let at = 0; at < size; at += zeros.length) fs.writeSync(this.fd, zeros, 0, Math.min(zeros.length, size - at), at);
    fs.fsyncSync(this.fd);
    this.record = Buffer.alloc(recordBytes, 0x5a);
  }

  /** One synchronous write + fdatasync into the preallocated region; returns microseconds. */
  round(): number {
    const at = (this.next++ % this.rounds) * this.record.length;
    const t0 = process.hrtime.bigint();
    fs.writeSync(this.fd, this.record, 0, this.record.length, at);
    fs.fdatasyncSync(this.fd);
    return Number(process.hrtime.bigint() - t0) / 1000;
  }

  close(): void {
    fs.closeSync(this.fd);
    fs.rmSync(this.file, { force: true });
  }
}
