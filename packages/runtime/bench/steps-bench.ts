import "reflect-metadata";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Config } from "../src/engine/config.js";
import { Engine } from "../src/engine/engine.js";
import { floorSamples } from "./floor.js";
import { Ctx } from "../src/workflow/ctx.js";
import { Workflow } from "../src/workflow/decorators.js";
import { percentile, round } from "./percentile.js";
import { PlainSteps as Plain, STEPS, stepLatencies, TimedSteps as Timed } from "./step-workflows.js";

const SEQUENTIAL_WORKFLOWS = 150;
const BLOCKS = 5;
/**
 * The throughput curve: concurrent workflows per round, the untimed rounds before the timed ones
 * (the first lets the JIT compile the hot path; later rows run on compiled code), and the timed
 * rounds. 100,000 workflows make a million steps a round, so that row times two rounds and no warm-up.
 */
const CURVE = [
  { workflows: 1_000, warm: 1, rounds: 3 },
  { workflows: 10_000, warm: 1, rounds: 3 },
  { workflows: 100_000, warm: 0, rounds: 2 },
] as const;
const PARKED_RUNS = 100_000;

@Workflow("sleeper")
class Sleeper {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<void> {
    await this.ctx.sleep("1h");
  }
}

interface ThroughputRow {
  readonly workflows: number;
  readonly steps_per_s: number;
  readonly workflows_per_s: number;
  /** Steps/s of every timed round, in the order they ran; the row's figures are their median (the mean of the middle two for an even count). */
  readonly rounds_steps_per_s: readonly number[];
}

/** `--otel off` turns telemetry off in every engine the benchmark opens. */
let configure = (c: Config): Config => c;

/**
 * `npm run bench -- steps [--json] [--parked]`: durable steps on the local engine against the disk's floor,
 * measured in one run so their ratio holds on a noisy machine. `--engine postgres` runs the
 * PostgreSQL cluster benchmark instead.
 */
export async function runStepsBench(args: readonly string[]): Promise<void> {
  const at = args.indexOf("--engine");
  const engine = at < 0 ? "local" : args[at + 1];
  if (engine !== "local") {
    if (engine !== "postgres") throw new Error(`--engine must be local or postgres; got ${engine ?? "nothing"}`);
    return (await import("./pg-steps-bench.js")).runPgStepsBench(args);
  }
  const json = args.includes("--json");
  // `--otel memory` measures the cost of recording every span and metric (see docs/observability.md).
  const otelAt = args.indexOf("--otel");
  const otel = otelAt < 0 ? undefined : args[otelAt + 1];
  if (otel !== undefined && otel !== "memory" && otel !== "off") throw new Error(`--otel takes memory or off; got ${otel}`);
  const sdk = otel === "memory" ? (await import("./otel-setup.js")).registerMemorySdk() : undefined;
  if (otel === "off") configure = (c) => c.telemetry(false);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fusee-steps-"));
  const say = (line: string): void => {
    if (!json) process.stdout.write(`${line}\n`);
  };
  try {
    say(
      `fusee steps benchmark: ${STEPS}-step workflows, local engine, flush fdatasync, data under ${root}, telemetry ${otel === "memory" ? "recorded in memory" : otel === "off" ? "off" : "on, no SDK"}`,
    );
    // `--parked` measures only the parked runs and the opens, which the rest does not affect.
    if (args.includes("--parked")) {
      await sayParked(root, say);
      return;
    }
    const { floor, step } = await sequential(root);
    const ratio = round(step.p50_us / floor.p50_us, 3);
    say(`floor (write + fdatasync)        p50 ${floor.p50_us} us  p99 ${floor.p99_us} us`);
    say(`sequential step                  p50 ${step.p50_us} us  p99 ${step.p99_us} us  ratio ${ratio}`);

    const throughput: ThroughputRow[] = [];
    for (const point of CURVE) {
      const row = await concurrent(root, point.workflows, point.warm, point.rounds);
      throughput.push(row);
      say(
        `${String(point.workflows).padStart(6)} concurrent workflows   ${row.steps_per_s} steps/s  ${row.workflows_per_s} workflows/s` +
          `  (median of ${point.rounds} rounds: ${row.rounds_steps_per_s.join(", ")})`,
      );
    }

    const { bytesPerRun, bufferBytesPerRun, recoverySPerMillion, warmRecoverySPerMillion } = await sayParked(root, say);

    if (json) {
      process.stdout.write(
        `${JSON.stringify({
          floor_p50_us: floor.p50_us,
          floor_p99_us: floor.p99_us,
          step_p50_us: step.p50_us,
          step_p99_us: step.p99_us,
          step_ratio: ratio,
          throughput,
          parked_bytes_per_run: bytesPerRun,
          parked_buffer_bytes_per_run: bufferBytesPerRun,
          recovery_s_per_million: recoverySPerMillion,
          recovery_warm_s_per_million: warmRecoverySPerMillion,
        })}\n`,
      );
    }
    if (sdk !== undefined) say(`spans exported                   ${sdk.spans()}`);
  } finally {
    await sdk?.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** Sequential workflows and the floor in alternating blocks, so noise hits both alike. */
async function sequential(root: string): Promise<{ floor: { p50_us: number; p99_us: number }; step: { p50_us: number; p99_us: number } }> {
  const perBlock = SEQUENTIAL_WORKFLOWS / BLOCKS;
  const floor = new Float64Array(BLOCKS * perBlock * STEPS);
  const samples = new Float64Array(BLOCKS * perBlock * STEPS);
  stepLatencies.into = samples;
  stepLatencies.count = 0;
  const engine = await Engine.open(configure(Config.local(path.join(root, "seq")).shards(1)), { workflows: [Timed] });
  try {
    for (let i = 0; i < 20; i++) await (await engine.start(Timed, `warm-${i}`, 0)).result();
    stepLatencies.count = 0;
    for (let b = 0; b < BLOCKS; b++) {
      floor.set(floorSamples({ dir: root, rounds: perBlock * STEPS, recordBytes: 128 }), b * perBlock * STEPS);
      for (let i = 0; i < perBlock; i++) await (await engine.start(Timed, `seq-${b}-${i}`, 0)).result();
    }
  } finally {
    await engine.shutdown();
    stepLatencies.into = new Float64Array(0);
  }
  const sampleCount = stepLatencies.count;
  return {
    floor: { p50_us: round(percentile(floor, floor.length, 0.5)), p99_us: round(percentile(floor, floor.length, 0.99)) },
    step: { p50_us: round(percentile(samples, sampleCount, 0.5)), p99_us: round(percentile(samples, sampleCount, 0.99)) },
  };
}

async function concurrent(root: string, workflows: number, warm: number, timed: number): Promise<ThroughputRow> {
  for (let r = 0; r < warm; r++) await concurrentRound(path.join(root, `c-${workflows}-warm-${r}`), workflows);
  const rounds: number[] = [];
  for (let r = 0; r < timed; r++) rounds.push(await concurrentRound(path.join(root, `c-${workflows}-${r}`), workflows));
  const sorted = [...rounds].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return {
    workflows,
    steps_per_s: Math.round(median),
    workflows_per_s: Math.round(median / STEPS),
    rounds_steps_per_s: rounds.map((r) => Math.round(r)),
  };
}

/** One round on a fresh engine and data directory; returns steps per second. */
async function concurrentRound(dir: string, workflows: number): Promise<number> {
  const engine = await Engine.open(configure(Config.local(dir).shards(2).cache(workflows)), { workflows: [Plain] });
  try {
    const t0 = performance.now();
    const runs = await Promise.all(Array.from({ length: workflows }, (_, i) => engine.start(Plain, `p-${i}`, 0)));
    await Promise.all(runs.map((r) => r.result()));
    return (workflows * STEPS) / ((performance.now() - t0) / 1000);
  } finally {
    await engine.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function sayParked(root: string, say: (line: string) => void): Promise<Awaited<ReturnType<typeof parked>>> {
  const result = await parked(root);
  say(
    `heap per parked run              ${result.bytesPerRun} bytes (${PARKED_RUNS} runs asleep, after GC; ` +
      `array buffers besides: ${result.bufferBytesPerRun} bytes)`,
  );
  say(
    `open and recovery                ${result.recoverySPerMillion} s per million records (${result.records} records; opened again: ${result.warmRecoverySPerMillion})`,
  );
  return result;
}

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run the benchmark with node --expose-gc (npm run bench does)");
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function parked(root: string): Promise<{
  bytesPerRun: number;
  bufferBytesPerRun: number;
  recoverySPerMillion: number;
  warmRecoverySPerMillion: number;
  records: number;
}> {
  const dir = path.join(root, "parked");
  const config = configure(Config.local(dir).shards(2).cache(1_000));
  const engine = await Engine.open(config, { workflows: [Sleeper] });
  const before = heapAfterGc();
  // Typed arrays keep their contents outside the heap: the indexes' share of them is counted apart.
  const buffersBefore = process.memoryUsage().arrayBuffers;
  const batch = 5_000;
  for (let i = 0; i < PARKED_RUNS; i += batch) {
    await Promise.all(Array.from({ length: batch }, (_, j) => engine.start(Sleeper, `sleep-${i + j}`, undefined)));
  }
  // Every run has set its timer once each has two records (start, timer). The listing is counted in
  // a function of its own: a list of 100,000 runs kept alive by the loop's scope would be measured
  // as if each parked run cost its list item too (about 150 bytes more per run).
  const parkedCount = async (): Promise<number> => (await engine.listWhere({ status: "parked" }, PARKED_RUNS)).length;
  for (;;) {
    const sample = await engine.status(`sleep-${PARKED_RUNS - 1}`);
    if (sample && (await parkedCount()) >= PARKED_RUNS - 1_000) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const after = heapAfterGc();
  const buffersAfter = process.memoryUsage().arrayBuffers;
  await engine.shutdown();
  const records = PARKED_RUNS * 2;
  // The first open runs recovery's code cold, as a restarted process does; at this size that
  // fixed cost weighs on the per-record figure, so a second open (warm code) is timed too.
  const timedOpen = async (): Promise<number> => {
    // A restarted process carries none of the closed engine's garbage; collect it before the clock starts.
    heapAfterGc();
    const t0 = performance.now();
    const reopened = await Engine.open(config, { workflows: [] });
    const seconds = (performance.now() - t0) / 1000;
    await reopened.shutdown();
    return round((seconds * 1_000_000) / records, 2);
  };
  const recoverySPerMillion = await timedOpen();
  const warmRecoverySPerMillion = await timedOpen();
  return {
    bytesPerRun: Math.round((after - before) / PARKED_RUNS),
    bufferBytesPerRun: Math.round((buffersAfter - buffersBefore) / PARKED_RUNS),
    recoverySPerMillion,
    warmRecoverySPerMillion,
    records,
  };
}
