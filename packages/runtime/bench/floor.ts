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
  const recordBytes = options.recordBytes ?? 128;
  const file = path.join(options.dir, `floor-${process.pid}.bin`);
  const fd = fs.openSync(file, "w+", 0o600);
  try {
    const size = rounds * recordBytes;
    const zeros = Buffer.alloc(Math.min(size, 1024 * 1024));
    for (let at = 0; at < size; at += zeros.length) fs.writeSync(fd, zeros, 0, Math.min(zeros.length, size - at), at);
    fs.fsyncSync(fd);
    const record = Buffer.alloc(recordBytes, 0x5a);
    const samples = new Float64Array(rounds);
    for (let i = 0; i < rounds; i++) {
      const t0 = process.hrtime.bigint();
      fs.writeSync(fd, record, 0, recordBytes, i * recordBytes);
      fs.fdatasyncSync(fd);
      samples[i] = Number(process.hrtime.bigint() - t0) / 1000;
    }
    return samples;
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
}
