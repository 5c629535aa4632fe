import "reflect-metadata";
import { expect } from "chai";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { MemoryFileLayer } from "../storage/support/memory-file-layer.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { RejectedError } from "../../src/core/errors.js";
import { TwoStepsThenGo } from "./support/workflows.js";

@Workflow("quick-child")
class QuickChild {
  async run(): Promise<string> {
    return "done";
  }
}

@Workflow("step-child-step")
class StepChildStep {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.step("a", async () => 1);
    await this.ctx.startChild(QuickChild, `${this.ctx.workflowId}-child`, undefined);
    await this.ctx.step("b", async () => 2);
    return (await this.ctx.waitFor<string>("go")) ?? "";
  }
}

let tries = 0;

/** A step, a child, then a step whose first attempt fails and whose second waits for a back-off. */
@Workflow("step-child-retry")
class Retrying {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.step("a", async () => 1);
    await this.ctx.startChild(QuickChild, `${this.ctx.workflowId}-child`, undefined);
    await this.ctx.step(
      "b",
      async () => {
        if (tries++ % 2 === 0) throw new Error("not yet");
        return 2;
      },
      { retry: RetryPolicy.exponential(2, "10ms", "80ms") },
    );
    return "done";
  }
}

/**
 * Two resets of one run made at once: each replaces the run it finds when its turn comes, or is
 * refused when that run has no such step yet; never do both rewrite the same run. Returns how many
 * replaced it.
 */
async function resetTwice(run: { reset(step: string): Promise<void> }, step: string): Promise<number> {
  const outcomes = await Promise.allSettled([run.reset(step), run.reset(step)]);
  for (const o of outcomes) if (o.status === "rejected") expect(o.reason).to.be.instanceOf(RejectedError);
  return outcomes.filter((o) => o.status === "fulfilled").length;
}

describe("resets of one run made at once", () => {
  it("replace the run one after the other, each new run with a whole journal that replays", async () => {
    const engine = await TestEngine.create({ workflows: [TwoStepsThenGo, StepChildStep, QuickChild], cache: 1 });
    try {
      const run = await engine.start(TwoStepsThenGo, "twice", 1);
      await engine.idle();
      const replaced = await resetTwice(run, "a");
      await engine.idle();
      const detail = await run.describe();
      expect(detail.runId, "each reset that was not refused made a run of its own").to.equal(1 + replaced);
      expect(detail.journal[0]?.kind).to.equal("start");
      expect(detail.status).to.not.equal("stopped");
      await run.signal("go", 10);
      expect(await run.result()).to.equal(13);
    } finally {
      await engine.shutdown();
    }
  });

  it("replace a run that started a child one after the other", async () => {
    const engine = await TestEngine.create({ workflows: [TwoStepsThenGo, StepChildStep, QuickChild], cache: 1 });
    try {
      const run = await engine.start(StepChildStep, "twice-child", undefined);
      await engine.idle();
      const replaced = await resetTwice(run, "a");
      await engine.idle();
      const detail = await run.describe();
      expect(detail.journal[0]?.kind, `the journal is ${detail.journal.map((r) => r.kind).join(", ")}`).to.equal("start");
      expect(detail.runId, "each reset that was not refused made a run of its own").to.equal(1 + replaced);
      expect(detail.status).to.not.equal("stopped");
      await run.signal("go", "went");
      expect(await run.result()).to.equal("went");
    } finally {
      await engine.shutdown();
    }
  });

  it("replace a run between the attempts of a step one after the other, on a data directory", async () => {
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    const clock = new VirtualClock(Date.UTC(2030, 0, 1), { runningStepGrace: 0 });
    const config = Config.local("/data").shards(1).cache(1).clock(clock);
    const engine = await Engine.open(config, { workflows: [Retrying, QuickChild], fileLayer: disk });
    try {
      const run = await engine.start(Retrying, "twice-retrying", undefined);
      await engine.idle({ runningSteps: "ignore" });
      const replaced = await resetTwice(run, "a");
      await engine.idle({ runningSteps: "ignore" });
      const detail = await run.describe();
      expect(detail.journal[0]?.kind, `the journal is ${detail.journal.map((r) => r.kind).join(", ")}`).to.equal("start");
      expect(detail.runId, "each reset that was not refused made a run of its own").to.equal(1 + replaced);
      expect(detail.status).to.not.equal("stopped");
      await clock.advance(100);
      await engine.idle({ runningSteps: "ignore" });
      expect(await run.result()).to.equal("done");
    } finally {
      await engine.shutdown();
    }
  });
});
