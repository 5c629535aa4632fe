import "reflect-metadata";
import { expect } from "chai";
import type { CatchUp } from "../../src/engine/schedule-spec.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";

const T0 = Date.UTC(2030, 0, 1);
const SECOND = 1000;

@Workflow("update-tick")
class Tick {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    return this.ctx.workflowId;
  }
}

/** The instants of the schedule's runs, ascending. */
async function instants(engine: TestEngine, name: string): Promise<number[]> {
  const runs = await engine.list(1000);
  return runs
    .filter((r) => r.id.startsWith(`${name}@`))
    .map((r) => Number(r.id.slice(name.length + 1)))
    .sort((a, b) => a - b);
}

describe("Schedule.update and the instants of the new spec that came before it", () => {
  for (const catchUp of ["all", "one", "none"] as const satisfies readonly CatchUp[]) {
    it(`starts none of them, and the new spec's instants from the update on (catchUp '${catchUp}')`, async () => {
      const engine = await TestEngine.create({ workflows: [Tick], startTime: T0 });
      try {
        const s = await engine.schedule("m", { workflow: Tick, cron: "* * * * *", overlap: "allow-all", catchUp });
        await engine.clock.advance(30_500);
        await s.update({ workflow: Tick, every: SECOND, overlap: "allow-all", catchUp });
        await engine.clock.advance(2_000);
        await engine.idle();
        expect(await instants(engine, "m")).to.deep.equal([T0 + 31 * SECOND, T0 + 32 * SECOND]);
        expect((await s.describe()).started).to.equal(2);
      } finally {
        await engine.shutdown();
      }
    });
  }

  it("starts none of them after a power loss right after the update either", async () => {
    for (let seed = 0; seed < 4; seed++) {
      let engine = await TestEngine.create({ workflows: [Tick], startTime: T0, seed });
      try {
        const s = await engine.schedule("m", { workflow: Tick, every: 2 * SECOND, overlap: "allow-all", catchUp: "all" });
        await engine.clock.advance(1_600);
        await s.update({ workflow: Tick, every: SECOND, overlap: "allow-all", catchUp: "all" });
        engine = await engine.crash();
        await engine.clock.advance(1_000);
        await engine.idle();
        // The update was acknowledged: its spec and the point it took effect at survive together.
        expect(await instants(engine, "m"), `crash pattern ${seed}`).to.deep.equal([T0 + 2 * SECOND]);
      } finally {
        await engine.shutdown();
      }
    }
  });

  it("catches up the new spec's instants missed while down after the update, by its catch-up policy", async () => {
    let engine = await TestEngine.create({ workflows: [Tick], startTime: T0 });
    try {
      const s = await engine.schedule("m", { workflow: Tick, cron: "* * * * *", overlap: "allow-all", catchUp: "one" });
      await engine.clock.advance(30_500);
      await s.update({ workflow: Tick, every: SECOND, overlap: "allow-all", catchUp: "all" });
      await engine.shutdown();
      await engine.clock.advance(3_000);
      engine = await engine.restart();
      await engine.idle();
      expect(await instants(engine, "m")).to.deep.equal([31, 32, 33].map((n) => T0 + n * SECOND));
    } finally {
      await engine.shutdown();
    }
  });

  it("catches up the instants missed while down under the old spec when the spec changes as the engine opens", async () => {
    const HOUR = 3_600_000;
    let engine = await TestEngine.create({ workflows: [Tick], startTime: T0 });
    try {
      await engine.schedule("h", { workflow: Tick, every: "1h", overlap: "allow-all", catchUp: "all" });
      await engine.clock.advance("1h");
      await engine.shutdown();
      await engine.clock.advance("3h");
      engine = await engine.restart();
      // As a new version of an application declares its schedules at start-up.
      await engine.schedule("h", { workflow: Tick, every: "30m", overlap: "allow-all", catchUp: "all" });
      await engine.clock.advance("1h");
      await engine.idle();
      expect(await instants(engine, "h")).to.deep.equal([1, 2, 3, 4, 4.5, 5].map((n) => T0 + n * HOUR));
    } finally {
      await engine.shutdown();
    }
  });

  for (const restart of [false, true])
    it(`backfills the new spec's instants in a period the old spec's instants and a trigger covered${restart ? ", after a restart" : ""}`, async () => {
      let engine = await TestEngine.create({ workflows: [Tick], startTime: T0 });
      try {
        let s = await engine.schedule("b", { workflow: Tick, cron: "* * * * *", overlap: "allow-all" });
        await engine.clock.advance(10_000);
        await s.trigger();
        await engine.clock.advance(51_000);
        await s.update({ workflow: Tick, every: 10 * SECOND, overlap: "allow-all" });
        if (restart) {
          engine = await engine.restart();
          s = engine.getSchedule("b");
        }
        await s.backfill(T0, T0 + 60 * SECOND);
        await engine.idle();
        expect(await instants(engine, "b")).to.deep.equal([0, 10, 20, 30, 40, 50, 60].map((n) => T0 + n * SECOND));
        // The instants the old spec dealt with stay dealt with: a second backfill starts nothing.
        const started = (await s.describe()).started;
        await s.backfill(T0, T0 + 60 * SECOND);
        await engine.idle();
        expect((await s.describe()).started).to.equal(started);
      } finally {
        await engine.shutdown();
      }
    });

  it("goes on with a backfill under way over the old spec's instants, across a restart", async () => {
    const HOUR = 3_600_000;
    let engine = await TestEngine.create({ workflows: [Tick], startTime: T0 });
    try {
      const s = await engine.schedule("p", { workflow: Tick, every: "1h", overlap: "allow-all", paused: true });
      await s.backfill(T0 - 600 * HOUR, T0 - HOUR);
      await s.update({ workflow: Tick, every: "30m", overlap: "allow-all" });
      engine = await engine.restart();
      await engine.idle();
      const started = await instants(engine, "p");
      expect(started).to.have.length(600);
      expect(started.every((t) => (t - T0) % HOUR === 0)).to.equal(true);
    } finally {
      await engine.shutdown();
    }
  });
});

describe("Schedule.update made after an instant of the old spec fell due and before its timer fired (a late timer)", () => {
  for (const every of [SECOND, 7 * SECOND])
    it(`deals with that instant as its timer would have (new spec every ${every / SECOND} s)`, async () => {
      const engine = await TestEngine.create({ workflows: [Tick], startTime: T0 });
      try {
        let updated: Promise<unknown> | undefined;
        // Set before the schedule arms its timer, this one fires first at the instant of 10 s.
        engine.clock.schedule(10 * SECOND, () => {
          updated = engine.schedule("late", { workflow: Tick, every, overlap: "allow-all", input: "changed" });
        });
        await engine.schedule("late", { workflow: Tick, every: 10 * SECOND, overlap: "allow-all" });
        await engine.clock.advance(10 * SECOND);
        await updated;
        await engine.idle();
        expect(await instants(engine, "late")).to.deep.equal([T0 + 10 * SECOND]);
        expect((await engine.getSchedule("late").describe()).started).to.equal(1);
      } finally {
        await engine.shutdown();
      }
    });
});
