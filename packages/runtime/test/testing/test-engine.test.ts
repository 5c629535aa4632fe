import "reflect-metadata";
import { expect } from "chai";
import { shardOf } from "../../src/core/ids.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Signal, Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { localKind, type EngineKind } from "../runtime/harness.js";

const effects: string[] = [];

@Workflow()
class Reminder {
  private snoozed = 0;
  constructor(private readonly ctx: Ctx) {}

  async run(text: string): Promise<string> {
    const at = await this.ctx.step("schedule", async () => {
      effects.push(`scheduled ${text}`);
      return this.ctx.now();
    });
    await this.ctx.sleep("1h");
    await this.ctx.condition(() => this.snoozed >= 0);
    return `${text} at ${this.ctx.now() - at}ms`;
  }

  @Signal() snooze(): void {
    this.snoozed++;
  }
}

@Workflow()
class Hanging {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    return this.ctx.step(
      "call",
      async () => {
        effects.push(`attempt ${this.ctx.attempt()}`);
        if (this.ctx.attempt() === 1) {
          // Hangs until its timeout aborts it, as a stuck connection would.
          const signal = this.ctx.abortSignal;
          await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
        }
        return "answered";
      },
      { timeout: "30s", retry: RetryPolicy.exponential(2, "1s", "1s") },
    );
  }
}

describe("TestEngine", () => {
  beforeEach(() => {
    effects.length = 0;
  });

  describe("idle", () => {
    it("resolves once the run waits on its timer, with its step journaled", async () => {
      const engine = await TestEngine.create({ workflows: [Reminder] });
      await engine.start(Reminder, "r-1", "call mum");
      await engine.idle();
      expect((await engine.status("r-1"))?.status).to.equal("suspended");
      expect((await engine.describe("r-1"))!.journal.map((r) => r.kind)).to.deep.equal(["start", "step", "timer"]);
      await engine.shutdown();
    });
  });

  describe("clock.advance", () => {
    it("fires a timer armed while it waited for the engine, on the local engine too", async () => {
      const kind: EngineKind = localKind();
      const clock = new VirtualClock();
      const engine = await kind.open({ workflows: [Reminder] }, (c) => c.clock(clock));
      try {
        // No wait after the start: the timer is armed only once the step's record is on disk.
        const run = await engine.start(Reminder, "r-2", "water the plants");
        await clock.advance("2h");
        expect((await run.status()).status).to.equal("ok");
        expect(await run.result()).to.equal("water the plants at 3600000ms");
      } finally {
        await engine.shutdown();
        await kind.cleanup();
      }
    });

    it("lets time pass around a step that hangs until its timeout, and the retry answers", async () => {
      const engine = await TestEngine.create({ workflows: [Hanging], runningStepGrace: "20ms" });
      const run = await engine.start(Hanging, "h-1", undefined);
      await engine.clock.advance("40s");
      expect(await run.result()).to.equal("answered");
      expect(effects).to.deep.equal(["attempt 1", "attempt 2"]);
      await engine.shutdown();
    });
  });

  describe("restart and crash", () => {
    it("restarts on the same data: a sleeping run resumes and finishes", async () => {
      let engine = await TestEngine.create({ workflows: [Reminder] });
      await engine.start(Reminder, "r-3", "stretch");
      await engine.idle();
      engine = await engine.restart();
      await engine.clock.advance("1h");
      expect(await engine.run("r-3").result()).to.equal("stretch at 3600000ms");
      expect(effects).to.deep.equal(["scheduled stretch"]);
      await engine.shutdown();
    });

    it("crashes losing or keeping each shard's pending batch on its own, and the new engine resumes what was durable", async () => {
      // Two starts pending in two shards at the crash: each survives or not as the seed says.
      const [a, b] = ["r-a", "r-b"];
      expect(shardOf(a, 4)).to.not.equal(shardOf(b, 4));
      const outcome = async (seed: number): Promise<string> => {
        let engine = await TestEngine.create({ workflows: [Reminder], seed });
        await engine.start(Reminder, "r-4", "durable");
        await engine.idle();
        void engine.start(Reminder, a, "pending").catch(() => undefined);
        void engine.start(Reminder, b, "pending").catch(() => undefined);
        engine = await engine.crash();
        const kept = `${(await engine.status(a)) === undefined ? "-" : a} ${(await engine.status(b)) === undefined ? "-" : b}`;
        await engine.clock.advance("1h");
        expect(await engine.run("r-4").result()).to.equal("durable at 3600000ms");
        await engine.shutdown();
        return kept;
      };
      const seen = new Set<string>();
      for (let seed = 0; seed < 16; seed++) seen.add(await outcome(seed));
      expect([...seen].sort()).to.deep.equal(["- -", "- r-b", "r-a -", "r-a r-b"]);
      expect(await outcome(3), "a seed crashes the same way every time").to.equal(await outcome(3));
    });

    for (const how of ["restart", "crash"] as const) {
      it(`keeps the workflows registered after create across a ${how}, and across the next`, async () => {
        let engine = await TestEngine.create();
        engine.register(Reminder);
        await engine.start(Reminder, `r-${how}`, how);
        await engine.idle();
        engine = await engine[how]();
        // Resumed and waiting on its timer, not parked for want of its workflow type.
        await engine.idle();
        expect((await engine.run(`r-${how}`).status()).status).to.equal("suspended");
        engine = await engine[how]();
        await engine.clock.advance("1h");
        expect(await engine.run(`r-${how}`).result()).to.equal(`${how} at 3600000ms`);
        await engine.shutdown();
      });
    }
  });
});
