import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type LocalLog, openLocalLog } from "../src/storage/index.js";
import { FloorFile } from "./floor.js";
import { measureAppendThroughput } from "./append-throughput.js";
import { percentile, round } from "./percentile.js";

const RECORD_BYTES = 100;
const SEQUENTIAL_WARMUP = 300;
/** Rounds of the floor and of each sequential log, alternating one by one so noise hits all alike. */
const SEQUENTIAL_ROUNDS = 3000;
const THROUGHPUT_MS = 1500;
const APPENDERS = [1, 16, 256, 4096] as const;
const SHARDS = [1, 4] as const;
/** The `appendAll` row: this many callers, each handing over this many records per call. */
const BATCH_CALLERS = 64;
const BATCH_RECORDS = 64;

interface ThroughputRow {
  readonly shards: number;
  /** Records per call: 1 for `append`, more for `appendAll`. */
  readonly per_call: number;
  readonly appenders: number;
  readonly records_per_s: number;
  readonly records_per_sync: number;
  readonly ack_p50_us: number;
  readonly ack_p99_us: number;
}

/**
 * `npm run bench -- log [--json]`: the floor and the local log measured in one run, so their
 * ratio holds on a noisy machine where absolute figures do not.
 */
export async function runLogBench(args: readonly string[]): Promise<void> {
  const json = args.includes("--json");
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fusee-bench-"));
  const progress = (line: string): void => {
    if (!json) process.stdout.write(`${line}\n`);
  };
  try {
    progress(`fusee log benchmark: ${RECORD_BYTES}-byte records, flush fdatasync, data under ${root}`);
    const { floor, sequential, unallocated, unallocatedFloor } = await sequentialAgainstFloor(root);
    const floorP50 = floor.p50_us;
    const floorP99 = floor.p99_us;

    const throughput: ThroughputRow[] = [];
    for (const shards of SHARDS) {
      const log = await openLocalLog({ dir: path.join(root, `tp-${shards}`), shards });
      try {
        for (const appenders of APPENDERS) throughput.push(await measureThroughput(log, shards, appenders));
        throughput.push(await measureThroughput(log, shards, BATCH_CALLERS, BATCH_RECORDS));
      } finally {
        await log.close();
      }
    }

    const result = {
      floor_p50_us: floorP50,
      floor_p99_us: floorP99,
      append_p50_us: sequential.p50_us,
      append_p99_us: sequential.p99_us,
      append_ratio: round(sequential.p50_us / floorP50, 3),
      append_p50_us_without_preallocation: unallocated.p50_us,
      append_ratio_without_preallocation: round(unallocated.p50_us / unallocatedFloor.p50_us, 3),
      throughput,
    };
    if (json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }
    const lines = [
      "",
      `floor (write + fdatasync, preallocated)   p50 ${floorP50} us   p99 ${floorP99} us`,
      `sequential append, 1 appender            p50 ${sequential.p50_us} us   p99 ${sequential.p99_us} us` +
        `   ratio to floor p50 ${result.append_ratio}`,
      `  same without preallocation             p50 ${unallocated.p50_us} us   p99 ${unallocated.p99_us} us` +
        `   ratio to its floor p50 ${result.append_ratio_without_preallocation}`,
      "",
      "shards  appenders  per call   records/s  records/sync  ack p50 us  ack p99 us",
      ...throughput.map(
        (r) =>
          `${pad(r.shards, 6)}  ${pad(r.appenders, 9)}  ${pad(r.per_call, 8)}  ${pad(r.records_per_s, 10)}` +
          `  ${pad(r.records_per_sync, 12)}  ${pad(r.ack_p50_us, 10)}  ${pad(r.ack_p99_us, 10)}`,
      ),
      "(per call 1: each appender awaits `append` of one record; more: `appendAll` of that many)",
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

interface Latency {
  readonly p50_us: number;
  readonly p99_us: number;
}

/**
 * Sequential append latency (one appender awaiting each append) against the floor, one round of
 * each in turn; then the same for a log without preallocation, against its own floor rounds.
 */
async function sequentialAgainstFloor(
  root: string,
): Promise<{ floor: Latency; sequential: Latency; unallocated: Latency; unallocatedFloor: Latency }> {
  const preallocated = await alternate(path.join(root, "seq"), true, root);
  const growing = await alternate(path.join(root, "seq-grow"), false, root);
  return {
    floor: preallocated.floor,
    sequential: preallocated.append,
    unallocated: growing.append,
    unallocatedFloor: growing.floor,
  };
}

async function alternate(dir: string, preallocate: boolean, root: string): Promise<{ floor: Latency; append: Latency }> {
  const floor = new Float64Array(SEQUENTIAL_ROUNDS);
  const append = new Float64Array(SEQUENTIAL_ROUNDS);
  const entry = { stream: "run-000001", body: Buffer.alloc(RECORD_BYTES, 0x61) };
  const log = await openLocalLog({ dir, shards: 1, preallocate });
  const floorFile = new FloorFile({ dir: root, rounds: SEQUENTIAL_ROUNDS, recordBytes: 128 });
  try {
    for (let i = 0; i < SEQUENTIAL_WARMUP; i++) await log.append(0, entry);
    for (let i = 0; i < SEQUENTIAL_ROUNDS; i++) {
      floor[i] = floorFile.round();
      const t0 = performance.now();
      await log.append(0, entry);
      append[i] = (performance.now() - t0) * 1000;
    }
  } finally {
    floorFile.close();
    await log.close();
  }
  const latency = (samples: Float64Array): Latency => ({
    p50_us: round(percentile(samples, SEQUENTIAL_ROUNDS, 0.5)),
    p99_us: round(percentile(samples, SEQUENTIAL_ROUNDS, 0.99)),
  });
  return { floor: latency(floor), append: latency(append) };
}

async function measureThroughput(log: LocalLog, shards: number, appenders: number, perCall = 1): Promise<ThroughputRow> {
  const row = await measureAppendThroughput(log, {
    appenders,
    shards,
    recordBytes: RECORD_BYTES,
    durationMs: THROUGHPUT_MS,
    maxSamples: 4_000_000,
    ...(perCall > 1 ? { perCall } : {}),
  });
  return { shards, per_call: perCall, ...row };
}

function pad(value: number, width: number): string {
  return String(value).padStart(width);
}
