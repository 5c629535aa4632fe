import "reflect-metadata";
import { expect } from "chai";
import { TimeoutError } from "../../src/core/errors.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { Workflow } from "../../src/workflow/decorators.js";

@Workflow("slow-kid")
class SlowKid {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    await this.ctx.waitFor("never");
    return "done";
  }
}

@Workflow("impatient-parent")
class ImpatientParent {
  constructor(private readonly ctx: Ctx) {}
  async run(close: "terminate" | "request-cancel"): Promise<string> {
    let outcome: string;
    try {
      outcome = await this.ctx.executeChild<string>("slow-kid", `${this.ctx.workflowId}-kid`, undefined, { close, timeout: "80ms" });
    } catch (e) {
      outcome = e instanceof TimeoutError ? "timed out" : String(e);
    }
    // A step whose first attempt fails: the parent goes on waiting, on a back-off, in the instant it timed out.
    await this.ctx.step(
      "note",
      async () => {
        if (this.ctx.attempt() === 1) throw new Error("not yet");
        return "noted";
      },
      { retry: RetryPolicy.exponential(2, "10ms", "10ms") },
    );
    return outcome;
  }
}

describe("a child's timeout that fires while its parent is parked", () => {
  for (const close of ["terminate", "request-cancel"] as const) {
    it(`closes the child by its policy (${close}), as when the parent is in memory`, async () => {
      // One run in memory: the parent is parked while it waits, and woken (replayed) by its timer.
      const engine = await TestEngine.create({ workflows: [SlowKid, ImpatientParent], cache: 1, shards: 1 });
      try {
        const parent = await engine.start(ImpatientParent, `parent-${close}`, close);
        await engine.idle();
        await engine.clock.advance("80ms");
        const kid = await engine.status(`parent-${close}-kid`);
        expect(kid?.status).to.equal(close === "terminate" ? "terminated" : "cancelled");
        await engine.clock.advance("10ms");
        expect(await parent.result()).to.equal("timed out");
      } finally {
        await engine.shutdown();
      }
    });
  }

  it("closes the child when the parent is in memory (the same calls with room for both runs)", async () => {
    const engine = await TestEngine.create({ workflows: [SlowKid, ImpatientParent] });
    try {
      const parent = await engine.start(ImpatientParent, "parent-cached", "terminate");
      await engine.clock.advance("80ms");
      expect((await engine.status("parent-cached-kid"))?.status).to.equal("terminated");
      await engine.clock.advance("10ms");
      expect(await parent.result()).to.equal("timed out");
    } finally {
      await engine.shutdown();
    }
  });
});
