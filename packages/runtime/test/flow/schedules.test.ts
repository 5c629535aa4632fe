import "reflect-metadata";
import { expect } from "chai";
import { NotFoundError, RejectedError } from "../../src/core/errors.js";
import { Batch, Debounce } from "../../src/engine/flow-rules.js";
import { Schedule } from "../../src/engine/schedule-handle.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { eventually, localKind, onEachEngine, sleep, type EngineKind } from "../runtime/harness.js";

let reports = 0;

@Workflow()
class Report {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    reports++;
    return this.ctx.workflowId;
  }
}

let ticks = 0;

@Workflow()
class Tick {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    return (await this.ctx.step("effect", async () => ticks++)) as number;
  }
}

@Workflow()
class LongJob {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.waitFor("done");
    return this.ctx.workflowId;
  }
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e: unknown) => e,
  );
}

const HOUR = 3_600_000;

let effects = 0;
/** Resolved by the effect of the instant it waits for, from inside the step that has it. */
let onEffect: { readonly at: number; resolve(): void } | undefined;

@Workflow()
class Effect {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    return (await this.ctx.step("effect", async () => {
      const n = ++effects;
      if (onEffect?.at === n) onEffect.resolve();
      return n;
    })) as number;
  }
}

describe("schedules", () => {
  it("counts a run in describe().started before its code runs, live and in a backfill", async () => {
    const engine = await TestEngine.create({ workflows: [Effect] });
    effects = 0;
    try {
      const s = await engine.schedule("counted", { workflow: Effect, every: 1, paused: true, overlap: "allow-all" });
      for (const n of [1, 40, 120]) {
        const reached = new Promise<void>((resolve) => (onEffect = { at: n, resolve }));
        if (n === 1) await s.trigger();
        else if (n === 40) await s.backfill(1, 39);
        else await s.backfill(100, 180);
        await reached;
        expect((await s.describe()).started, `after the effect of run ${n}`).to.be.at.least(n);
      }
    } finally {
      onEffect = undefined;
      await engine.shutdown();
    }
  });

  it("counts in describe().started the runs of a backfill page still in flight, never more than its bound", async () => {
    const engine = await TestEngine.create({ workflows: [LongJob] });
    try {
      const s = await engine.schedule("bulk", { workflow: LongJob, every: 1, paused: true, overlap: "allow-all" });
      // 1,024 unfinished runs fill the backfill's slots, so the fifth page waits part-started.
      await s.backfill(1, 1030);
      await eventually("the slots fill", async () => (await engine.list(2000)).length === 1024, 20_000);
      const firstThree = (await engine.list(2000)).slice(0, 3);
      for (const run of firstThree) await engine.run(run.id).signal("done", undefined);
      await eventually("three more runs start", async () => (await engine.list(2000)).length === 1027, 10_000);
      await sleep(50);
      expect((await engine.list(2000)).length, "no more than the bound in flight").to.equal(1027);
      expect((await s.describe()).started).to.equal(1027);
      expect((await s.describe()).backfills).to.have.length(1);
    } finally {
      await engine.shutdown();
    }
  });

  onEachEngine("engine.schedule", (kind) => {
    beforeEach(() => {
      reports = 0;
      ticks = 0;
    });

    it("starts one run per instant, pauses, and backfills without starting an instant twice", async () => {
      const engine = await kind().open({ workflows: [Report] });
      const spec = { workflow: "Report", every: 100, overlap: "skip" as const };
      const s = await engine.schedule("nightly", spec);
      await eventually("three runs", () => reports >= 3);
      expect((await s.describe()).started).to.be.at.least(3);
      await s.pause();
      await sleep(50);
      const n = reports;
      await sleep(300);
      expect(reports, "paused").to.equal(n);
      expect((await s.describe()).nextTimes).to.deep.equal([]);

      const now = Date.now();
      await s.backfill(now - 2000, now);
      await eventually("the backfill", async () => reports > n && (await s.describe()).backfills.length === 0);
      const ids = (await engine.listWhere({ type: "Report" }, 1000)).map((r) => r.id);
      expect(new Set(ids).size, "no instant started twice").to.equal(ids.length);
      expect(
        ids.every((id) => id.startsWith("nightly@")),
        ids.join(),
      ).to.equal(true);
      expect((await s.describe()).started).to.equal(ids.length);

      const again = await engine.schedule("nightly", spec);
      expect((await again.describe()).started, "calling schedule again keeps one schedule").to.equal(ids.length);
      const byName = engine.getSchedule("nightly");
      expect((await byName.describe()).started, "a handle by name sees the same schedule").to.equal(ids.length);
      await s.delete();
      expect(await rejection(again.describe())).to.be.instanceOf(NotFoundError);
      expect(await rejection(byName.pause())).to.be.instanceOf(NotFoundError);
      expect(await rejection(engine.getSchedule("never-created").describe())).to.be.instanceOf(NotFoundError);
      await engine.shutdown();
    });

    it("remembers backfilled instants after retention dropped their runs", async () => {
      const engine = await kind().open({ workflows: [Tick] }, (c) => c.retention("25ms"));
      const s = await engine.schedule("range", { workflow: Tick, every: 1, paused: true });
      await s.backfill(1, 1001);
      await eventually("the entire requested range", () => ticks === 1001, 20_000);
      await eventually("the backfill to finish", async () => (await s.describe()).backfills.length === 0);
      await eventually("the first run to expire", async () => (await engine.status(Schedule.runId("range", 1))) === undefined);
      await s.backfill(1, 1002);
      await eventually("only the new instant", () => ticks >= 1002);
      await eventually("the second backfill to finish", async () => (await s.describe()).backfills.length === 0);
      expect((await s.describe()).started).to.equal(1002);
      expect(ticks).to.equal(1002);
      await engine.shutdown();
    });

    it("refuses a spec that cannot work", async () => {
      const engine = await kind().open({ workflows: [Report] });
      const bad = async (spec: object): Promise<unknown> => rejection(engine.schedule("bad", spec as never));
      expect(await bad({ workflow: "Report" })).to.be.instanceOf(RejectedError);
      expect(await bad({ workflow: "Report", every: "1h", cron: "* * * * *" })).to.be.instanceOf(RejectedError);
      expect(await bad({ workflow: "Report", cron: "every day" })).to.be.instanceOf(RejectedError);
      expect(await bad({ workflow: "Report", cron: "0 9 * * *", timezone: "Mars/Olympus" })).to.be.instanceOf(RejectedError);
      expect(await bad({ workflow: "Report", every: "1h", overlap: "sometimes" })).to.be.instanceOf(RejectedError);
      expect(await bad({ workflow: "Report", every: "1h", catchUp: "most" })).to.be.instanceOf(RejectedError);
      expect(await bad({ workflow: "Nope", every: "1h" })).to.be.instanceOf(NotFoundError);
      expect(await rejection(engine.schedule("$sys", { workflow: "Report", every: "1h" }))).to.be.instanceOf(RejectedError);
      expect(await rejection(engine.start(Report, "$sys@1", undefined)), "workflow IDs may not take the engine's prefix").to.be.instanceOf(
        RejectedError,
      );
      await engine.shutdown();
    });
  });

  describe("across a restart (local)", () => {
    let local: EngineKind;
    beforeEach(() => {
      local = localKind();
      ticks = 0;
    });
    afterEach(() => local.cleanup());

    it("resumes a backfill that was half done, starting every instant exactly once", async () => {
      const first = await local.open({ workflows: [Tick] });
      const s = await first.schedule("range", { workflow: Tick, every: 1, paused: true });
      await s.backfill(1, 3000);
      await eventually("part of the backfill", () => ticks >= 600, 20_000);
      await first.shutdown();
      const before = ticks;
      expect(before).to.be.below(3000);

      const engine = await local.reopen({ workflows: [Tick] });
      const again = await engine.schedule("range", { workflow: Tick, every: 1, paused: true });
      await eventually("the rest of the backfill", async () => (await again.describe()).backfills.length === 0, 30_000);
      const d = await again.describe();
      expect(d.started).to.equal(3000);
      expect(d.paused).to.equal(true);
      const runs = await engine.listWhere({ type: "Tick" }, 10_000);
      expect(runs).to.have.length(3000);
      for (const r of runs) await engine.run(r.id).result();
      expect(ticks, "each instant's step ran once, runs resumed after the restart included").to.be.at.least(3000);
      await engine.shutdown();
    });

    it("catches up the latest missed instant after downtime, and skips the others", async () => {
      const first = await local.open({ workflows: [Report] });
      await first.schedule("ticker", { workflow: Report, every: 100 });
      await first.shutdown();
      await sleep(450);
      reports = 0;
      const engine = await local.reopen({ workflows: [Report] });
      const s = await engine.schedule("ticker", { workflow: Report, every: 100 });
      await eventually("the catch-up run", () => reports >= 1);
      const d = await s.describe();
      expect(d.skipped).to.be.at.least(2);
      expect(d.started).to.be.at.least(1);
      await s.pause();
      await engine.shutdown();
    });

    it("starts every missed instant with catchUp 'all'", async () => {
      const first = await local.open({ workflows: [Report] });
      const created = Date.now();
      await first.schedule("all", { workflow: Report, every: 100, catchUp: "all", paused: false });
      await first.shutdown();
      await sleep(450);
      const engine = await local.reopen({ workflows: [Report] });
      const s = await engine.schedule("all", { workflow: Report, every: 100, catchUp: "all" });
      await s.pause();
      await eventually("the caught-up runs", async () => (await s.describe()).backfills.length === 0);
      const d = await s.describe();
      const expected = Math.floor(Date.now() / 100) - Math.floor(created / 100);
      expect(d.skipped).to.equal(0);
      expect(d.started).to.be.at.least(4).and.at.most(expected);
      await engine.shutdown();
    });

    it("starts the instants missed while down though a pause arrives while the reopened engine recovers", async () => {
      const first = await local.open({ workflows: [LongJob] });
      const s0 = await first.schedule("held", { workflow: LongJob, every: 100, catchUp: "all", overlap: "allow-all" });
      await eventually("two runs of the schedule", async () => (await s0.describe()).started >= 2);
      await first.shutdown();
      await sleep(450);
      const engine = await local.reopen({ workflows: [LongJob] });
      // The runs started before the restart are still going: the recovery reads their status first.
      const asked = Date.now();
      const s = engine.getSchedule("held");
      await s.pause();
      await eventually("the caught-up runs", async () => (await s.describe()).backfills.length === 0);
      const instants = (await engine.listWhere({ type: "LongJob" }, 1_000)).map((r) => Number(r.id.split("@")[1])).sort((a, b) => a - b);
      const due = Math.floor(asked / 100) * 100;
      const missing: number[] = [];
      for (let t = instants[0]!; t <= due - 100; t += 100) if (!instants.includes(t)) missing.push(t);
      expect(missing, "instants due before the pause was asked for").to.deep.equal([]);
      await engine.shutdown();
    });
  });

  describe("on a virtual clock", () => {
    it("runs a daily cron schedule in its time zone, in milliseconds", async () => {
      const engine = await TestEngine.create({ workflows: [Report], startTime: Date.UTC(2030, 0, 1) });
      const s = await engine.schedule("daily", { workflow: Report, cron: "0 9 * * *", timezone: "Europe/Paris" });
      const nine = Date.UTC(2030, 0, 1, 8);
      expect((await s.describe()).nextTimes).to.deep.equal([nine, nine + 24 * HOUR, nine + 48 * HOUR]);
      await engine.clock.advance("3d");
      const ids = (await engine.listWhere({ type: "Report" }, 10)).map((r) => r.id).sort();
      expect(ids).to.deep.equal([0, 1, 2].map((d) => Schedule.runId("daily", nine + d * 24 * HOUR)));
      for (const id of ids) expect(await engine.run(id).result()).to.equal(id);

      await s.pause();
      await engine.clock.advance("2d");
      expect(await engine.listWhere({ type: "Report" }, 10)).to.have.length(3);
      await s.resume();
      await engine.clock.advance("1d");
      expect(await engine.listWhere({ type: "Report" }, 10), "paused days are not caught up").to.have.length(4);
      await s.trigger();
      const d = await s.describe();
      expect(d.started).to.equal(5);
      expect(d.recentRuns[0]).to.equal(Schedule.runId("daily", engine.clock.now()));
      await engine.shutdown();
      expect(engine.clock.pendingTimers, "no timer left after shutdown").to.equal(0);
    });

    it("skips an instant while the previous run is still going", async () => {
      const engine = await TestEngine.create({ workflows: [LongJob] });
      const s = await engine.schedule("skip", { workflow: LongJob, every: "1h" });
      await engine.clock.advance("3h");
      const d = await s.describe();
      expect([d.started, d.skipped]).to.deep.equal([1, 2]);
      expect(d.running).to.have.length(1);
      await engine.shutdown();
    });

    it("buffers one instant behind a running run and starts it when that run ends", async () => {
      const engine = await TestEngine.create({ workflows: [LongJob] });
      const s = await engine.schedule("buffer", { workflow: LongJob, every: "1h", overlap: "buffer-one" });
      await engine.clock.advance("3h");
      let d = await s.describe();
      expect([d.started, d.skipped]).to.deep.equal([1, 1]);
      expect(d.buffered).to.equal(engine.clock.now() - HOUR);
      const running = d.running[0] as string;
      await engine.run(running).signal("done", true);
      await engine.run(running).result();
      await eventually("the buffered run", async () => (await s.describe()).started === 2);
      const buffered = d.buffered as number;
      d = await s.describe();
      expect(d.recentRuns[0], "the buffered instant's run").to.equal(Schedule.runId("buffer", buffered));
      expect(d.buffered).to.equal(undefined);
      await engine.shutdown();
    });

    it("ends the running run with terminate-other, asks it to cancel with cancel-other, and overlaps with allow-all", async () => {
      const engine = await TestEngine.create({ workflows: [LongJob] });
      const t = await engine.schedule("terminate", { workflow: LongJob, every: "1h", overlap: "terminate-other" });
      await engine.clock.advance("2h");
      const [newer, older] = (await t.describe()).recentRuns as [string, string];
      expect((await engine.status(older))?.status).to.equal("terminated");
      expect((await engine.status(newer))?.status).to.be.oneOf(["running", "suspended"]);
      await t.pause();

      const c = await engine.schedule("cancel", { workflow: LongJob, every: "1h", overlap: "cancel-other" });
      await engine.clock.advance("2h");
      const [, cancelled] = (await c.describe()).recentRuns as [string, string];
      await eventually("the cancelled run to end", async () => (await engine.status(cancelled))?.status === "cancelled");
      await c.pause();

      const a = await engine.schedule("all", { workflow: LongJob, every: "1h", overlap: "allow-all" });
      await engine.clock.advance("3h");
      expect((await a.describe()).running).to.have.length(3);
      await engine.shutdown();
    });
  });

  it("keeps schedules, debounce windows and batches out of the run list of a reopened engine", async () => {
    const local = localKind();
    try {
      const first = await local.open({ workflows: [Report] });
      await first.schedule("quiet", { workflow: Report, every: "1d" });
      await first.debounce(Report, "quiet", undefined, Debounce.of("1h"));
      await first.batch(Report, "quiet", 1, Batch.of(10, "1h"));
      await first.shutdown();
      const engine = await local.reopen({ workflows: [Report] });
      expect(await engine.list(10)).to.deep.equal([]);
      expect((await (await engine.schedule("quiet", { workflow: Report, every: "1d" })).describe()).started).to.equal(0);
      await engine.shutdown();
    } finally {
      await local.cleanup();
    }
  });
});
