// One engine process of the PostgreSQL steps benchmark. Reads commands from stdin, one JSON object a
// line ({ n, op, ... }), answers each on stdout ({ n, ok, value } or { n, ok: false, message }) and
// prints `ready` once its engine is open. Arguments: url schema owner leaseMs shards.
import "reflect-metadata";
import { createInterface } from "node:readline";
import { Config } from "../src/engine/config.js";
import { Engine } from "../src/engine/engine.js";
import { epochMs, type SlowInput, SlowSteps, stepTimes } from "./pg-failover-steps.js";
import { PlainSteps, STEPS, stepLatencies, TimedSteps } from "./step-workflows.js";

const [url, schema, owner, leaseMs, shards] = process.argv.slice(2) as [string, string, string, string, string];

/** Every workflow of a throughput round fits in memory at once, as on the local engine. */
const CACHE = 10_000;

const engine = await Engine.open(
  Config.postgres(url, { schema, owner, leaseMs: Number(leaseMs), cluster: true })
    .shards(Number(shards))
    .cache(CACHE),
  { workflows: [PlainSteps, TimedSteps, SlowSteps] },
);

type Command =
  | { n: number; op: "plain"; ids: string[] }
  | { n: number; op: "timed"; ids: string[]; warm: number }
  | { n: number; op: "slow"; ids: string[]; input: SlowInput }
  | { n: number; op: "results"; ids: string[]; expect: number }
  | { n: number; op: "resumed"; ids: string[]; after: number };

/** Starts every run at once and waits for all results; the wall time spans first start to last result. */
async function plain(ids: readonly string[]): Promise<{ t0: number; t1: number }> {
  const t0 = epochMs();
  const runs = await Promise.all(ids.map((id) => engine.start(PlainSteps, id, 0)));
  const results = await Promise.all(runs.map((r) => r.result()));
  const t1 = epochMs();
  const wrong = results.filter((r) => r !== STEPS).length;
  if (wrong > 0) throw new Error(`${wrong} of ${ids.length} runs returned a wrong total`);
  return { t0, t1 };
}

/** Runs one workflow at a time; the first `warm` are not timed. Returns each step's latency in µs. */
async function timed(ids: readonly string[], warm: number): Promise<number[]> {
  stepLatencies.into = new Float64Array((ids.length - warm) * STEPS);
  stepLatencies.count = 0;
  for (const [i, id] of ids.entries()) {
    if (i === warm) stepLatencies.count = 0;
    await (await engine.start(TimedSteps, id, 0)).result();
  }
  const samples = Array.from(stepLatencies.into.subarray(0, stepLatencies.count));
  stepLatencies.into = new Float64Array(0);
  return samples;
}

/** How many of the runs ended with the expected total. */
async function results(ids: readonly string[], expect: number): Promise<number> {
  const values = await Promise.all(ids.map((id) => engine.run(id).result()));
  return values.filter((v) => v === expect).length;
}

/** For each run, when this process first started and first completed a step after `after`, or null. */
function resumed(ids: readonly string[], after: number): ({ started: number; completed: number } | null)[] {
  return ids.map((id) => (stepTimes.get(id) ?? []).find((t) => t.started > after) ?? null);
}

async function perform(c: Command): Promise<unknown> {
  switch (c.op) {
    case "plain":
      return plain(c.ids);
    case "timed":
      return timed(c.ids, c.warm);
    case "slow":
      await Promise.all(c.ids.map((id) => engine.start(SlowSteps, id, c.input)));
      return null;
    case "results":
      return results(c.ids, c.expect);
    case "resumed":
      return resumed(c.ids, c.after);
  }
}

createInterface({ input: process.stdin })
  .on("line", (text) => {
    const c = JSON.parse(text) as Command;
    perform(c).then(
      (value) => process.stdout.write(`${JSON.stringify({ n: c.n, ok: true, value })}\n`),
      (e: Error) => process.stdout.write(`${JSON.stringify({ n: c.n, ok: false, message: `${e.name}: ${e.message}` })}\n`),
    );
  })
  // The parent going away, even by a crash, ends this process rather than leaving it holding leases.
  .on("close", () => {
    engine.shutdown().then(
      () => process.exit(0),
      (e: unknown) => {
        process.stderr.write(`shutdown failed: ${(e as Error)?.stack ?? String(e)}\n`);
        process.exit(1);
      },
    );
  });
process.stdout.write("ready\n");
