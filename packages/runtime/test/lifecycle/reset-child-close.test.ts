import "reflect-metadata";
import { expect } from "chai";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Update, Workflow } from "../../src/workflow/decorators.js";

/** Waits for a signal; its update runs a step, so the child has a step to be reset to. */
@Workflow("resettable-child")
class ResettableChild {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    return (await this.ctx.waitFor<string>("go")) ?? "";
  }

  @Update() async note(n: number): Promise<number> {
    return this.ctx.step("note", async () => n);
  }
}

@Workflow("parent-of-resettable")
class Parent {
  constructor(private readonly ctx: Ctx) {}

  async run(close: "terminate" | "request-cancel"): Promise<string> {
    return this.ctx.executeChild(ResettableChild, `${this.ctx.workflowId}-child`, undefined, { close });
  }
}

describe("a child that was reset", () => {
  for (const close of ["terminate", "request-cancel"] as const) {
    it(`still gets its close policy (${close}) when its parent ends`, async () => {
      const engine = await TestEngine.create({ workflows: [Parent, ResettableChild] });
      try {
        const parent = await engine.start(Parent, `p-${close}`, close);
        await engine.idle();
        const child = engine.run(`p-${close}-child`);
        await child.update("note", 1);
        await child.reset("note");
        await engine.idle();
        expect((await child.status()).runId, "the reset made a new run of the child").to.equal(2);
        await parent.terminate("the parent is done");
        await engine.idle();
        expect((await child.status()).status).to.equal(close === "terminate" ? "terminated" : "cancelled");
      } finally {
        await engine.shutdown();
      }
    });
  }
});
