import "reflect-metadata";
import { expect } from "chai";
import type { CatchUp, Overlap } from "../../src/engine/schedule-spec.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";

const HOUR = 3_600_000;
const T0 = Date.UTC(2030, 0, 1);

/** Called by the first run a test starts, once, as its code begins: before its schedule records the start. */
let onFirstRun: (() => void) | undefined;

@Workflow("orphan-hold")
class Hold {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    const hook = onFirstRun;
    onFirstRun = undefined;
    hook?.();
    await this.ctx.sleep("3h");
    return this.ctx.workflowId;
  }
}

/**
 * The engine crashes in the instant its schedule started a run, after the run's start is durable and
 * before the schedule's record of it is: the run survives, the record does not. Returns the IDs of
 * the schedule's runs that are running after the next instant.
 */
async function crashAfterStart(overlap: Overlap, catchUp: CatchUp): Promise<string[]> {
  let engine = await TestEngine.create({ workflows: [Hold], startTime: T0, seed: 1 });
  await engine.schedule("s", { workflow: Hold, every: "1h", overlap, catchUp });
  let crashed: Promise<TestEngine> | undefined;
  const first = engine;
  onFirstRun = () => void (crashed = first.crash());
  await engine.clock.advance("1h");
  expect(crashed, "the first instant's run began").to.not.equal(undefined);
  engine = await (crashed as Promise<TestEngine>);
  try {
    await engine.idle();
    expect((await engine.status(`s@${T0 + HOUR}`))?.status, "the run of the first instant survives the crash").to.equal("suspended");
    await engine.clock.advance("1h");
    await engine.idle();
    const running = (await engine.list(10)).filter((r) => r.status === "suspended" || r.status === "running" || r.status === "parked");
    return running.map((r) => r.id).sort();
  } finally {
    await engine.shutdown();
  }
}

describe("a schedule whose engine crashed between starting a run and recording it", () => {
  for (const catchUp of ["none", "one", "all"] as const) {
    for (const overlap of ["skip", "buffer-one", "terminate-other"] as const) {
      it(`keeps one run at a time with overlap '${overlap}' and catchUp '${catchUp}'`, async () => {
        const running = await crashAfterStart(overlap, catchUp);
        expect(running).to.have.length(1);
      });
    }
  }
});

/**
 * The engine crashes while `trigger()` starts a run, after the run's start is durable and before the
 * schedule's record of it is. Returns the schedule's running runs once the next live instant passed,
 * and what the schedule says it started.
 */
async function crashInTrigger(overlap: Overlap): Promise<{ running: string[]; started: number; recent: readonly string[] }> {
  let engine = await TestEngine.create({ workflows: [Hold], startTime: T0, seed: 1 });
  const schedule = await engine.schedule("s", { workflow: Hold, every: "1h", overlap });
  await engine.clock.advance("10m");
  let crashed: Promise<TestEngine> | undefined;
  const first = engine;
  onFirstRun = () => void (crashed = first.crash());
  await schedule.trigger().catch(() => undefined);
  expect(crashed, "the triggered run began").to.not.equal(undefined);
  engine = await (crashed as Promise<TestEngine>);
  try {
    await engine.idle();
    expect((await engine.status(`s@${T0 + 10 * 60_000}`))?.status, "the triggered run survives the crash").to.equal("suspended");
    await engine.clock.advance("50m");
    await engine.idle();
    const running = (await engine.list(10)).filter((r) => r.status === "suspended" || r.status === "running" || r.status === "parked");
    const described = await engine.getSchedule("s").describe();
    return { running: running.map((r) => r.id).sort(), started: described.started, recent: described.recentRuns };
  } finally {
    await engine.shutdown();
  }
}

describe("a schedule whose engine crashed while trigger() started a run", () => {
  for (const overlap of ["skip", "buffer-one"] as const)
    it(`counts the triggered run as its own, so overlap '${overlap}' starts no second run beside it`, async () => {
      const { running, started, recent } = await crashInTrigger(overlap);
      expect(running).to.deep.equal([`s@${T0 + 10 * 60_000}`]);
      expect(started).to.equal(1);
      expect(recent).to.deep.equal([`s@${T0 + 10 * 60_000}`]);
    });

  it("ends the triggered run under overlap 'terminate-other' when the next instant starts", async () => {
    const { running, started } = await crashInTrigger("terminate-other");
    expect(running).to.deep.equal([`s@${T0 + HOUR}`]);
    expect(started).to.equal(2);
  });
});

describe("a schedule paused right after its engine recovered from a crash between starting a run and recording it", () => {
  it("counts the run as its own, so overlap 'skip' starts no second run beside it after the resume", async () => {
    let engine = await TestEngine.create({ workflows: [Hold], startTime: T0, seed: 1 });
    await engine.schedule("s", { workflow: Hold, every: "1h", overlap: "skip" });
    let crashed: Promise<TestEngine> | undefined;
    const first = engine;
    onFirstRun = () => void (crashed = first.crash());
    await engine.clock.advance("1h");
    engine = await (crashed as Promise<TestEngine>);
    try {
      // Paused as soon as the engine is back, before any instant after the crash.
      await engine.getSchedule("s").pause();
      await engine.idle();
      await engine.clock.advance("30m");
      await engine.getSchedule("s").resume();
      await engine.clock.advance("1h");
      await engine.idle();
      const running = (await engine.list(10)).filter((r) => r.status === "suspended" || r.status === "running" || r.status === "parked");
      expect(running.map((r) => r.id)).to.deep.equal([`s@${T0 + HOUR}`]);
      expect((await engine.getSchedule("s").describe()).started).to.equal(1);
    } finally {
      await engine.shutdown();
    }
  });
});

describe("a schedule paused between starting a run and recording it, then crashed", () => {
  it("counts the run as its own when it opens paused", async () => {
    let engine = await TestEngine.create({ workflows: [Hold], startTime: T0, seed: 1 });
    await engine.schedule("s", { workflow: Hold, every: "1h", overlap: "allow-all" });
    let crashed: Promise<TestEngine> | undefined;
    const first = engine;
    // The pause is appended before the crash and the run's start record after it: crash pattern 1
    // keeps the pause's batch, so the engine opens paused with the run unrecorded.
    onFirstRun = () => {
      void first
        .getSchedule("s")
        .pause()
        .catch(() => undefined);
      crashed = first.crash(1);
    };
    await engine.clock.advance("1h");
    expect(crashed, "the first instant's run began").to.not.equal(undefined);
    engine = await (crashed as Promise<TestEngine>);
    try {
      await engine.idle();
      const d = await engine.getSchedule("s").describe();
      expect(d.paused, "the pause survived").to.equal(true);
      expect((await engine.status(`s@${T0 + HOUR}`))?.status, "the run survived").to.equal("suspended");
      expect([d.started, d.recentRuns], "the schedule counts its run").to.deep.equal([1, [`s@${T0 + HOUR}`]]);
    } finally {
      await engine.shutdown();
    }
  });
});

/**
 * The engine crashes while the run of the schedule's first instant is being started, before the run
 * or its record is durable; if `update`, right after an update of the schedule's spec (a snapshot of
 * its stream) is. Returns the schedule's runs and its count of started runs once the engine is back.
 */
async function crashWhileStarting(update: boolean): Promise<{ runs: string[]; started: number; recent: readonly string[] }> {
  const spec = { workflow: Hold, every: "1h", overlap: "skip" } as const;
  const first = await TestEngine.create({ workflows: [Hold], startTime: T0 });
  await first.schedule("s", spec);
  // The schedule's timer is armed by now: the one below, set later for the same instant, fires after it.
  await first.idle();
  let crashed: Promise<TestEngine> | undefined;
  onFirstRun = () => void (crashed = first.crash());
  // Fires right after the schedule's own timer of the same instant, while the instant's run is being started.
  if (update) first.clock.schedule(HOUR, () => void first.schedule("s", { ...spec, input: "changed" }).catch(() => undefined));
  await first.clock.advance("1h");
  const engine = await (crashed as Promise<TestEngine>);
  try {
    await engine.idle();
    const d = await engine.getSchedule("s").describe();
    return { runs: (await engine.list(10)).map((r) => r.id), started: d.started, recent: d.recentRuns };
  } finally {
    await engine.shutdown();
  }
}

describe("a schedule whose engine crashed while the run of a due instant was being started", () => {
  it("starts the instant's run once the engine is back", async () => {
    expect(await crashWhileStarting(false)).to.deep.equal({ runs: [`s@${T0 + HOUR}`], started: 1, recent: [`s@${T0 + HOUR}`] });
  });

  it("starts the instant's run once the engine is back, though a snapshot of its stream was written meanwhile", async () => {
    expect(await crashWhileStarting(true)).to.deep.equal({ runs: [`s@${T0 + HOUR}`], started: 1, recent: [`s@${T0 + HOUR}`] });
  });
});
