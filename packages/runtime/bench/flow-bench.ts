import "reflect-metadata";
import { Config } from "../src/engine/config.js";
import { Engine } from "../src/engine/engine.js";
import { Limits } from "../src/engine/limits.js";
import { systemClock } from "../src/core/clock.js";
import { Ctx } from "../src/workflow/ctx.js";
import { Workflow } from "../src/workflow/decorators.js";
import { round } from "./percentile.js";

const WAITERS = 10_000;
const INSTANTS = 1_000_000;

let gateOpen = false;

@Workflow("gated")
class Gated {
  constructor(private readonly ctx: Ctx) {}

  async run(n: number): Promise<number> {
    return (await this.ctx.step(
      "gated",
      async () => {
        while (!gateOpen) await new Promise((r) => setTimeout(r, 1));
        return n;
      },
      { limit: "gate", priority: n % 3, fairness: `tenant-${n % 10}` },
    )) as number;
  }
}

@Workflow("instant")
class Instant {
  async run(): Promise<void> {}
}

/**
 * `npm run bench -- flow [--json]`: permit hand-offs of a limit with 10,000 waiting steps (in the
 * limit alone, and through the engine's limit-gated steps), and a backfill of 1,000,000 schedule
 * instants on the memory engine (time, peak heap, runs swept by retention as it goes).
 */
export async function runFlowBench(args: readonly string[]): Promise<void> {
  const json = args.includes("--json");
  const say = (line: string): void => {
    if (!json) process.stdout.write(`${line}\n`);
  };
  say(`limit hand-offs, ${WAITERS.toLocaleString("en")} waiters...`);
  const queue = await handOffsInQueue();
  const steps = await handOffsThroughSteps();
  say(`backfill of ${INSTANTS.toLocaleString("en")} instants...`);
  const backfill = await backfillInstants();
  const result = {
    limit_queue: { waiters: WAITERS, handoffs_per_s: queue },
    limit_steps: { waiters: WAITERS, handoffs_per_s: steps.perSecond, peak_waiting: steps.peakWaiting },
    backfill: {
      instants: INSTANTS,
      seconds: backfill.seconds,
      runs_per_s: backfill.perSecond,
      peak_heap_mb: backfill.peakHeapMb,
      covered_ranges: 1,
    },
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  say("");
  say("| measure | figure |");
  say("|---|---|");
  say(`| permit hand-offs/s, limit alone (${WAITERS} waiters, 3 priorities, 10 fairness keys) | ${queue.toLocaleString("en")} |`);
  say(`| permit hand-offs/s, limit-gated steps (${WAITERS} runs waiting, memory engine) | ${steps.perSecond.toLocaleString("en")} |`);
  say(`| backfill of ${INSTANTS.toLocaleString("en")} instants: seconds | ${backfill.seconds} |`);
  say(`| backfill: runs started/s | ${backfill.perSecond.toLocaleString("en")} |`);
  say(`| backfill: peak heap (MB) | ${backfill.peakHeapMb} |`);
}

/** Hand-offs of the limit's queue itself: every waiter gets the single permit in turn. */
async function handOffsInQueue(): Promise<number> {
  const limits = new Limits(systemClock);
  limits.declare("gate", { concurrent: 1 });
  const first = await limits.acquire({ limit: "gate" })!.granted;
  const done: Array<Promise<void>> = [];
  for (let i = 0; i < WAITERS; i++) {
    done.push(limits.acquire({ limit: "gate", priority: i % 3, fairness: `tenant-${i % 10}` })!.granted.then((release) => release()));
  }
  const t0 = performance.now();
  first();
  await Promise.all(done);
  return Math.round(WAITERS / ((performance.now() - t0) / 1000));
}

/** Hand-offs through the engine: runs whose one step waits for the single permit. */
async function handOffsThroughSteps(): Promise<{ perSecond: number; peakWaiting: number }> {
  gateOpen = false;
  const engine = await Engine.open(Config.memory().cache(WAITERS * 2), { workflows: [Gated], limits: { gate: { concurrent: 1 } } });
  const runs = [];
  for (let i = 0; i < WAITERS; i++) runs.push(await engine.start(Gated, `g-${i}`, i));
  while (engine.limitWaiting("gate") < WAITERS - 1) await new Promise((r) => setTimeout(r, 5));
  const peakWaiting = engine.limitWaiting("gate");
  const t0 = performance.now();
  gateOpen = true;
  for (const r of runs) await r.result();
  const perSecond = Math.round(WAITERS / ((performance.now() - t0) / 1000));
  await engine.shutdown();
  return { perSecond, peakWaiting };
}

/** A paged backfill through the engine; finished runs leave by retention while it goes. */
async function backfillInstants(): Promise<{ seconds: number; perSecond: number; peakHeapMb: number }> {
  const engine = await Engine.open(Config.memory().retention("1s"), { workflows: [Instant] });
  const schedule = await engine.schedule("bench", { workflow: Instant, every: 1, paused: true });
  let peak = process.memoryUsage().heapUsed;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 50);
  const t0 = performance.now();
  await schedule.backfill(1, INSTANTS);
  while ((await schedule.describe()).backfills.length > 0) await new Promise((r) => setTimeout(r, 50));
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  const started = (await schedule.describe()).started;
  if (started !== INSTANTS) throw new Error(`backfill started ${started} runs, not ${INSTANTS}`);
  await engine.shutdown();
  return { seconds: round(seconds, 1), perSecond: Math.round(INSTANTS / seconds), peakHeapMb: round(peak / 2 ** 20, 0) };
}
