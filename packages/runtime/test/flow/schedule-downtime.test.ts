import "reflect-metadata";
import { expect } from "chai";
import { rmSync } from "node:fs";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import type { CatchUp } from "../../src/engine/schedule-spec.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { eventually, tempDir } from "../runtime/harness.js";
import { MemoryFileLayer } from "../storage/support/memory-file-layer.js";

@Workflow("downtime-report")
class Report {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    return this.ctx.workflowId;
  }
}

const HOUR = 3_600_000;
const T0 = Date.UTC(2030, 0, 1);

/** Runs an hourly schedule, stops the engine for `down`, reopens it, and returns the instants whose runs exist. */
async function afterDowntime(catchUp: CatchUp, downHours: number): Promise<number[]> {
  const dir = tempDir("schedule-downtime");
  const clock = new VirtualClock(T0);
  const config = Config.local(dir).shards(2).clock(clock);
  try {
    const first = await Engine.open(config, { workflows: [Report] });
    await first.schedule("hourly", { workflow: Report, every: "1h", catchUp });
    await clock.advance("1h");
    await eventually("the first instant's run", async () => (await first.list(10)).length === 1);
    await first.shutdown();
    await clock.advance(downHours * HOUR);
    const engine = await Engine.open(config, { workflows: [Report] });
    const schedule = await engine.schedule("hourly", { workflow: Report, every: "1h", catchUp });
    const expected = catchUp === "all" ? 1 + downHours : catchUp === "one" ? 2 : 1;
    await eventually(
      `${expected} runs`,
      async () => (await engine.list(100)).length >= expected && (await schedule.describe()).backfills.length === 0,
    );
    const ids = (await engine.list(100)).map((r) => r.id);
    expect(
      ids.every((id) => id.startsWith("hourly@")),
      "runs are named after their instants",
    ).to.equal(true);
    await schedule.pause();
    await engine.shutdown();
    return ids.map((id) => Number(id.slice("hourly@".length))).sort((a, b) => a - b);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("a schedule's instants missed while the engine was down", () => {
  it("starts the single missed instant with catchUp 'all'", async () => {
    expect(await afterDowntime("all", 1)).to.deep.equal([T0 + HOUR, T0 + 2 * HOUR]);
  });

  it("starts every missed instant with catchUp 'all'", async () => {
    expect(await afterDowntime("all", 3)).to.deep.equal([1, 2, 3, 4].map((h) => T0 + h * HOUR));
  });

  it("starts the latest missed instant with catchUp 'one'", async () => {
    expect(await afterDowntime("one", 1)).to.deep.equal([T0 + HOUR, T0 + 2 * HOUR]);
    expect(await afterDowntime("one", 3)).to.deep.equal([T0 + HOUR, T0 + 4 * HOUR]);
  });

  it("starts none of them with catchUp 'none'", async () => {
    expect(await afterDowntime("none", 1)).to.deep.equal([T0 + HOUR]);
  });
});

describe("a schedule paused by an engine that stopped before it caught up", () => {
  it("starts, on the next open, the instants missed while down that were due before the pause", async () => {
    const dir = tempDir("schedule-downtime-pause");
    const clock = new VirtualClock(T0);
    const config = Config.local(dir).shards(2).clock(clock);
    try {
      const first = await Engine.open(config, { workflows: [Report] });
      await first.schedule("hourly", { workflow: Report, every: "1h", catchUp: "all" });
      await clock.advance("1h");
      await eventually("the first instant's run", async () => (await first.list(10)).length === 1);
      await first.shutdown();
      await clock.advance(3 * HOUR);
      // The pause is durable; the catch-up this engine would have begun after its recovery is not.
      const second = await Engine.open(config, { workflows: [Report] });
      const pausing = second.getSchedule("hourly").pause();
      await second.shutdown();
      await pausing;
      await clock.advance(2 * HOUR);
      const engine = await Engine.open(config, { workflows: [Report] });
      const schedule = engine.getSchedule("hourly");
      await eventually(
        "the caught-up runs",
        async () => (await schedule.describe()).backfills.length === 0 && (await engine.list(100)).length >= 4,
      );
      const instants = (await engine.list(100)).map((r) => Number(r.id.slice("hourly@".length))).sort((a, b) => a - b);
      expect(instants, "instants due before the pause, none after").to.deep.equal([1, 2, 3, 4].map((h) => T0 + h * HOUR));
      const d = await schedule.describe();
      expect([d.paused, d.started, d.skipped]).to.deep.equal([true, 4, 0]);
      await engine.shutdown();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a schedule paused and resumed as its engine opens after downtime", () => {
  it("starts the instants missed while down, as it does without the pause", async () => {
    // A disk in memory: the pause and resume reach the schedule before its catch-up on every run.
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    const clock = new VirtualClock(T0);
    const open = (): Promise<Engine> => Engine.open(Config.local("/data").shards(2).clock(clock), { workflows: [Report], fileLayer: disk });
    const first = await open();
    await first.schedule("hourly", { workflow: Report, every: "1h", catchUp: "all" });
    await clock.advance("1h");
    await eventually("the first instant's run", async () => (await first.list(10)).length === 1);
    await first.shutdown();
    await clock.advance(3 * HOUR);

    const engine = await open();
    try {
      const schedule = engine.getSchedule("hourly");
      await Promise.all([schedule.pause(), schedule.resume()]);
      await eventually(
        "the caught-up runs",
        async () => (await schedule.describe()).backfills.length === 0 && (await engine.list(100)).length >= 4,
      );
      const instants = (await engine.list(100)).map((r) => Number(r.id.slice("hourly@".length))).sort((a, b) => a - b);
      expect(instants).to.deep.equal([1, 2, 3, 4].map((h) => T0 + h * HOUR));
      const d = await schedule.describe();
      expect([d.paused, d.started, d.skipped]).to.deep.equal([false, 4, 0]);
    } finally {
      await engine.shutdown();
    }
  });
});
