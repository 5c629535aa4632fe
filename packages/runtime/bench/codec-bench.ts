import "reflect-metadata";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { aesGcm, decodeValue, encodeValue, TypeRegistry } from "../src/codec/index.js";
import { Config } from "../src/engine/config.js";
import { Engine } from "../src/engine/engine.js";
import { floorSamples } from "./floor.js";
import { percentile, round } from "./percentile.js";
import { PlainSteps as Plain, STEPS, stepLatencies, TimedSteps as Timed } from "./step-workflows.js";

const CONCURRENT = 1_000;
const SEQUENTIAL = 30;
const ROUNDS = 4;

type Mode = "plain" | "encrypted";

function configFor(dir: string, mode: Mode): Config {
  const config = Config.local(dir).shards(2).cache(CONCURRENT);
  return mode === "plain" ? config : config.codec(aesGcm({ k1: randomBytes(32) }));
}

async function throughput(dir: string, mode: Mode): Promise<number> {
  const engine = await Engine.open(configFor(dir, mode), { workflows: [Plain] });
  try {
    const t0 = performance.now();
    const runs = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => engine.start(Plain, `p-${i}`, 0)));
    await Promise.all(runs.map((r) => r.result()));
    return (CONCURRENT * STEPS) / ((performance.now() - t0) / 1000);
  } finally {
    await engine.shutdown();
  }
}

async function sequential(dir: string, mode: Mode, into: Float64Array): Promise<number> {
  const engine = await Engine.open(configFor(dir, mode), { workflows: [Timed] });
  try {
    for (let i = 0; i < 5; i++) await (await engine.start(Timed, `warm-${i}`, 0)).result();
    stepLatencies.into = into;
    for (let i = 0; i < SEQUENTIAL; i++) await (await engine.start(Timed, `s-${i}`, 0)).result();
    const taken = stepLatencies.count;
    stepLatencies.into = new Float64Array(0);
    return taken;
  } finally {
    await engine.shutdown();
  }
}

/** An order of about 1 KB as JSON: the payload size of a typical step result. */
const ORDER = {
  id: "order-000123",
  customer: { name: "Ann Example", email: "ann@example.com", tier: "gold", since: "2020-01-01" },
  lines: Array.from({ length: 12 }, (_, i) => ({ sku: `sku-${i}`, quantity: i + 1, cents: 1999 + i, tags: ["a", "b"] })),
  shipping: { street: "1 Main Street", city: "Springfield", zip: "12345", country: "US" },
  flags: { gift: false, express: true },
};

/** Microseconds per encode and decode of {@link ORDER} by the value codec, median of rounds of 1,000. */
function valueRoundTripUs(): number {
  const types = new TypeRegistry();
  for (let i = 0; i < 1_000; i++) decodeValue(encodeValue(ORDER, types), types);
  const rounds = new Float64Array(20);
  for (let r = 0; r < rounds.length; r++) {
    const t0 = performance.now();
    for (let i = 0; i < 1_000; i++) decodeValue(encodeValue(ORDER, types), types);
    rounds[r] = performance.now() - t0;
  }
  return percentile(rounds, rounds.length, 0.5);
}

/**
 * `npm run bench -- codec [--json]`: the value codec's round trip of a 1 KB object beside the
 * fdatasync floor, then the steps benchmark with and without `Config.codec(aesGcm(...))`, alternated
 * round by round in one run so machine noise hits both alike; prints the ratios.
 */
export async function runCodecBench(args: readonly string[]): Promise<void> {
  const json = args.includes("--json");
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fusee-codec-"));
  const say = (line: string): void => {
    if (!json) process.stdout.write(`${line}\n`);
  };
  const rates: Record<Mode, number[]> = { plain: [], encrypted: [] };
  const latency: Record<Mode, Float64Array> = {
    plain: new Float64Array(ROUNDS * SEQUENTIAL * STEPS),
    encrypted: new Float64Array(ROUNDS * SEQUENTIAL * STEPS),
  };
  const counts: Record<Mode, number> = { plain: 0, encrypted: 0 };
  try {
    say(`fusee codec benchmark: ${STEPS}-step workflows, local engine, plain against aes-256-gcm, ${ROUNDS} alternating rounds`);
    for (let r = 0; r < ROUNDS; r++) {
      const order: Mode[] = r % 2 === 0 ? ["plain", "encrypted"] : ["encrypted", "plain"];
      for (const mode of order) {
        rates[mode].push(await throughput(path.join(root, `t-${mode}-${r}`), mode));
        stepLatencies.count = counts[mode];
        counts[mode] = await sequential(path.join(root, `s-${mode}-${r}`), mode, latency[mode]);
      }
    }
    const valueUs = round(valueRoundTripUs(), 2);
    const floor = floorSamples({ dir: root, rounds: 500 });
    const floorUs = round(percentile(floor, floor.length, 0.5));
    say(
      `value codec              a ${JSON.stringify(ORDER).length} B object encoded and decoded in ${valueUs} us  fdatasync floor p50 ${floorUs} us  ratio ${round(valueUs / floorUs, 4)}`,
    );
    const median = (xs: number[]): number => percentile(Float64Array.from(xs), xs.length, 0.5);
    const plainRate = Math.round(median(rates.plain));
    const encryptedRate = Math.round(median(rates.encrypted));
    const p50 = (m: Mode): number => round(percentile(latency[m], counts[m], 0.5));
    const p99 = (m: Mode): number => round(percentile(latency[m], counts[m], 0.99));
    const throughputRatio = round(plainRate / encryptedRate, 3);
    const latencyRatio = round(p50("encrypted") / p50("plain"), 3);
    say(
      `${CONCURRENT} concurrent workflows  plain ${plainRate} steps/s  encrypted ${encryptedRate} steps/s  ratio ${throughputRatio} (target < 1.2)`,
    );
    say(
      `sequential step          plain p50 ${p50("plain")} us p99 ${p99("plain")} us  encrypted p50 ${p50("encrypted")} us p99 ${p99("encrypted")} us  ratio ${latencyRatio} (target < 1.2)`,
    );
    if (json) {
      process.stdout.write(
        `${JSON.stringify({
          plain_steps_per_s: plainRate,
          encrypted_steps_per_s: encryptedRate,
          throughput_ratio: throughputRatio,
          plain_step_p50_us: p50("plain"),
          plain_step_p99_us: p99("plain"),
          encrypted_step_p50_us: p50("encrypted"),
          encrypted_step_p99_us: p99("encrypted"),
          latency_ratio: latencyRatio,
          value_round_trip_us: valueUs,
          floor_p50_us: floorUs,
        })}\n`,
      );
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
