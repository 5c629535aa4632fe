import "reflect-metadata";
import { expect } from "chai";
import fs from "node:fs";
import { DataPointType, type MetricData } from "@opentelemetry/sdk-metrics";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { freshSchema, PG_URL, sql } from "../postgres/support/database.js";
import { eventually, tempDir } from "../runtime/harness.js";
import { type MemorySdk, memorySdk } from "./support.js";

@Workflow("metered")
class Metered {
  constructor(private readonly ctx: Ctx) {}
  async run(fail: boolean): Promise<number> {
    const a = await this.ctx.step("a", async () => 1);
    const b = await this.ctx.step("b", async () => (fail ? Promise.reject(new Error("no")) : 2), { retry: RetryPolicy.none() });
    return a + b;
  }
}

@Workflow("metered-wait")
class Waits {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<void> {
    await this.ctx.waitFor("never");
  }
}

@Workflow("metered-limited")
class Limited {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<void> {
    await this.ctx.step("slow", () => new Promise((r) => setTimeout(r, 300)), { limit: "one" });
  }
}

/** The sum of a counter's points whose attributes include `where`. */
function total(metric: MetricData | undefined, where: Record<string, unknown> = {}): number {
  let n = 0;
  for (const p of metric?.dataPoints ?? []) {
    if (Object.entries(where).every(([k, v]) => p.attributes[k] === v)) n += p.value as number;
  }
  return n;
}

describe("OpenTelemetry metrics", function () {
  this.timeout(30_000);
  let sdk: MemorySdk;
  let dir: string;
  beforeEach(() => {
    sdk = memorySdk();
    dir = tempDir("metrics");
  });
  afterEach(async () => {
    await sdk.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("counts steps and runs, measures step attempts and log syncs, and gauges live and parked runs and waiting permits", async () => {
    const engine = await Engine.open(Config.local(dir).shards(1).cache(1).telemetry({ meterProvider: sdk.meterProvider, tracerProvider: sdk.tracerProvider }), {
      workflows: [Metered, Waits, Limited],
      limits: { one: { concurrent: 1 } },
    });
    try {
      expect(await (await engine.start(Metered, "ok-1", false)).result()).to.equal(3);
      await (await engine.start(Metered, "failed-1", true)).result().catch(() => undefined);
      await engine.start(Waits, "wait-1", undefined);
      await engine.start(Waits, "wait-2", undefined);
      await engine.start(Limited, "limited-1", undefined);
      await engine.start(Limited, "limited-2", undefined);
      await eventually("a step waiting for a permit", () => engine.limitWaiting("one") === 1);

      const m = await sdk.metrics();
      expect(total(m.get("fusee.steps.started"), { "fusee.step.name": "a" })).to.equal(2);
      expect(total(m.get("fusee.steps.finished"), { "fusee.step.name": "b" })).to.equal(1);
      expect(total(m.get("fusee.steps.failed"), { "fusee.step.name": "b" })).to.equal(1);
      expect(total(m.get("fusee.runs.started"), { "fusee.workflow.type": "metered" })).to.equal(2);
      expect(total(m.get("fusee.runs.finished"), { "fusee.workflow.type": "metered", "fusee.run.status": "ok" })).to.equal(1);
      expect(total(m.get("fusee.runs.failed"), { "fusee.workflow.type": "metered" })).to.equal(1);

      const duration = m.get("fusee.step.duration")!;
      expect(duration.descriptor.unit).to.equal("ms");
      expect(duration.dataPointType).to.equal(DataPointType.HISTOGRAM);
      const stepA = duration.dataPoints.find((p) => p.attributes["fusee.step.name"] === "a" && p.attributes["fusee.step.outcome"] === "ok")!;
      expect((stepA.value as { count: number }).count).to.equal(2);

      const sync = m.get("fusee.log.sync.duration")!;
      const syncs = sync.dataPoints.reduce((n, p) => n + (p.value as { count: number }).count, 0);
      expect(syncs).to.be.greaterThan(5);
      const records = m.get("fusee.log.batch.records")!.dataPoints.reduce((n, p) => n + (p.value as { sum: number }).sum, 0);
      expect(records).to.be.greaterThanOrEqual(12, "every record of the runs above went through a synced batch");
      expect(m.get("fusee.log.batch.bytes")).to.not.equal(undefined);

      // A cache of one: the waiting runs beyond it are parked; the limited ones stay live while their steps run or wait.
      const live = total(m.get("fusee.runs.live"));
      const parked = total(m.get("fusee.runs.parked"));
      expect(live + parked).to.equal(4);
      expect(parked).to.be.greaterThanOrEqual(1);
      expect(total(m.get("fusee.limits.waiting"), { "fusee.limit.name": "one" })).to.equal(1);
    } finally {
      await engine.shutdown();
    }
  });

  it("measures the batch inserts of the PostgreSQL log as its syncs", async () => {
    const schema = freshSchema();
    const engine = await Engine.open(Config.postgres(PG_URL, { schema }).shards(1).telemetry({ meterProvider: sdk.meterProvider }), { workflows: [Metered] });
    try {
      expect(await (await engine.start(Metered, "pg-ok", false)).result()).to.equal(3);
      const m = await sdk.metrics();
      const sync = m.get("fusee.log.sync.duration")!;
      expect(sync.descriptor.unit).to.equal("ms");
      expect(sync.dataPoints.reduce((n, p) => n + (p.value as { count: number }).count, 0)).to.be.greaterThan(0);
      const records = m.get("fusee.log.batch.records")!.dataPoints.reduce((n, p) => n + (p.value as { sum: number }).sum, 0);
      expect(records).to.be.greaterThanOrEqual(4, "the run's start, two steps and finish");
    } finally {
      await engine.shutdown();
      await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});
