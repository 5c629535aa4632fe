import "reflect-metadata";
import { expect } from "chai";
import { AlreadyExistsError, RejectedError } from "../../src/core/errors.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";

@Workflow("abandoned-quick-child")
class QuickChild {
  async run(): Promise<string> {
    return "done";
  }
}

/** A step, then a child it leaves to itself (`abandon`), started after the step. */
@Workflow("step-then-abandoned-child")
class StepThenAbandon {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.step("a", async () => 1);
    const child = await this.ctx.startChild(QuickChild, `${this.ctx.workflowId}-child`, undefined, { close: "abandon" });
    return child.id;
  }
}

@Workflow("abandoned-waiting-child")
class WaitingChild {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.waitFor("never");
    return "done";
  }
}

/** As StepThenAbandon, with a child that is still running when the parent is reset; says how its start went. */
@Workflow("step-then-running-abandoned-child")
class StepThenRunningChild {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.step("a", async () => 1);
    try {
      await this.ctx.startChild(WaitingChild, `${this.ctx.workflowId}-child`, undefined, { close: "abandon" });
      return "started";
    } catch (e) {
      return e instanceof AlreadyExistsError ? `refused: ${e.code}` : `failed: ${String(e)}`;
    }
  }
}

describe("an abandoned child started after the step its parent is reset to", () => {
  it("is started again under its ID by the new run, as the ID's next run", async () => {
    const engine = await TestEngine.create({ workflows: [StepThenAbandon, QuickChild], cache: 1 });
    try {
      const run = await engine.start(StepThenAbandon, "abandon-once", undefined);
      await engine.idle();
      const child = engine.run("abandon-once-child");
      expect((await child.status()).runId).to.equal(1);
      await run.reset("a");
      await engine.idle();
      expect((await run.status()).runId).to.equal(2);
      const status = await child.status();
      expect(status.runId, "the new run's start of the child made a run of its own").to.equal(2);
      expect(status.status).to.equal("ok");
    } finally {
      await engine.shutdown();
    }
  });

  it("is started again once for each reset of two made at once that replaced the run", async () => {
    const engine = await TestEngine.create({ workflows: [StepThenAbandon, QuickChild], cache: 1 });
    try {
      const run = await engine.start(StepThenAbandon, "abandon-twice", undefined);
      await engine.idle();
      const outcomes = await Promise.allSettled([run.reset("a"), run.reset("a")]);
      for (const o of outcomes) if (o.status === "rejected") expect(o.reason).to.be.instanceOf(RejectedError);
      const replaced = outcomes.filter((o) => o.status === "fulfilled").length;
      await engine.idle();
      expect((await run.status()).runId).to.equal(1 + replaced);
      const status = await engine.run("abandon-twice-child").status();
      expect(status.runId, "each new run of the parent started the child again").to.equal(1 + replaced);
      expect(status.status).to.equal("ok");
    } finally {
      await engine.shutdown();
    }
  });

  it("still running, is left as it is: the new run's start of its ID fails with AlreadyExistsError, which the code can catch", async () => {
    const engine = await TestEngine.create({ workflows: [StepThenRunningChild, WaitingChild], cache: 1 });
    try {
      const run = await engine.start(StepThenRunningChild, "abandon-running", undefined);
      expect(await run.result()).to.equal("started");
      await run.reset("a");
      expect(await engine.run("abandon-running").result(), "the new run's start of the child").to.equal("refused: FUSEE_ALREADY_EXISTS");
      const child = await engine.run("abandon-running-child").status();
      expect([child.runId, child.status], "the abandoned child goes on").to.deep.equal([1, "parked"]);
    } finally {
      await engine.shutdown();
    }
  });
});
