import "reflect-metadata";
import { Config } from "../src/engine/config.js";
import { Engine } from "../src/engine/engine.js";
import { Ctx } from "../src/workflow/ctx.js";
import { Workflow } from "../src/workflow/decorators.js";
import { round } from "./percentile.js";

const RUNS = 100_000;
const QUERIES = 30;

@Workflow("order-listed")
class OrderListed {
  constructor(private readonly ctx: Ctx) {}

  async run(i: number): Promise<void> {
    this.ctx.setAttributes({ customer: `c-${i % 1_000}`, amount: i % 500, region: i % 2 === 0 ? "eu" : "us" });
  }
}

/**
 * `npm run bench -- list [--json]`: `engine.listWhere` over 100,000 finished runs with search
 * attributes, answered from the engine's index.
 */
export async function runListBench(args: readonly string[]): Promise<void> {
  const json = args.includes("--json");
  const engine = await Engine.open(Config.memory(), { workflows: [OrderListed] });
  try {
    const batch = 5_000;
    for (let i = 0; i < RUNS; i += batch) {
      const runs = await Promise.all(Array.from({ length: batch }, (_, j) => engine.start(OrderListed, `o-${i + j}`, i + j)));
      await Promise.all(runs.map((r) => r.result()));
    }
    const filters = [
      { customer: "c-7" },
      { amount: { gte: 100, lt: 120 }, region: "eu" },
      { status: "ok", customer: { in: ["c-1", "c-2", "c-3"] } },
    ];
    const rows: Array<{ filter: string; matches: number; p50_ms: number }> = [];
    for (const filter of filters) {
      const times: number[] = [];
      let found = 0;
      for (let q = 0; q < QUERIES; q++) {
        const t0 = performance.now();
        found = (await engine.listWhere(filter, 1_000)).length;
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      rows.push({ filter: JSON.stringify(filter), matches: found, p50_ms: round(times[times.length >> 1] as number, 2) });
    }
    if (json) {
      process.stdout.write(`${JSON.stringify({ runs: RUNS, queries: rows })}\n`);
      return;
    }
    process.stdout.write(`listWhere over ${RUNS} finished runs (memory engine, index only)\n`);
    for (const r of rows) process.stdout.write(`${r.filter.padEnd(60)} ${String(r.matches).padStart(6)} matches  p50 ${r.p50_ms} ms\n`);
  } finally {
    await engine.shutdown();
  }
}
