import { expect } from "chai";
import { RejectedError } from "../../src/core/errors.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Update, Workflow } from "../../src/workflow/decorators.js";
import { eventually, onEachEngine } from "../runtime/harness.js";

/** Returns at once; its update answers at once too. */
@Workflow("quick-total")
class Quick {
  private total = 0;
  async run(): Promise<number> {
    return this.total;
  }

  @Update() async add(n: number): Promise<number> {
    this.total += n;
    return this.total;
  }
}

/** Returns at once while its update's handler waits for a signal that never comes. */
@Workflow("quick-stuck-update")
class Stuck {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    return "ended";
  }

  @Update() async wait(): Promise<string> {
    await this.ctx.waitFor("never");
    return "never";
  }
}

/** Continues as new before anything else, once. */
@Workflow("quick-kid")
class Kid {
  constructor(private readonly ctx: Ctx<Kid>) {}
  async run(round: number): Promise<string> {
    if (round === 0) return this.ctx.continueAsNew(1);
    return "grown";
  }
}

@Workflow("quick-parent")
class Parent {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    return this.ctx.executeChild<string>("quick-kid", `kid-of-${this.ctx.workflowId}`, 0);
  }
}

onEachEngine("runs that end at once", (kind) => {
  it("answers an update started with a run whose body returns at once, before the run ends", async () => {
    const engine = await kind().open({ workflows: [Quick] });
    const { run, result } = await engine.updateWithStart<number, number>(Quick, "quick-1", undefined, "add", 3);
    expect(result).to.equal(3);
    expect(await run.result(), "the body returned before the update applied").to.equal(0);
    await engine.shutdown();
  });

  it("refuses the caller of an update whose handler had not returned when the run ended, rather than leaving it waiting", async () => {
    const engine = await kind().open({ workflows: [Stuck] });
    const refusal = await engine.updateWithStart<string, string>(Stuck, "stuck-1", undefined, "wait", undefined).catch((e: unknown) => e);
    expect(refusal).to.be.instanceOf(RejectedError);
    expect((refusal as RejectedError).reason).to.equal("already-finished");
    expect(await engine.run("stuck-1").result()).to.equal("ended");
    await engine.shutdown();
  });

  it("lets a child continue as new before anything else, and gives its parent the last run's result", async () => {
    const engine = await kind().open({ workflows: [Parent, Kid] });
    const parent = await engine.start(Parent, "parent-1");
    expect(await parent.result()).to.equal("grown");
    await eventually("the child's second run", async () => (await engine.status("kid-of-parent-1"))?.runId === 2);
    await engine.shutdown();
  });
});

describe("runs that end at once, on the test engine", () => {
  it("answers an update started with a run whose body returns at once", async () => {
    const engine = await TestEngine.create({ workflows: [Quick] });
    const { result } = await engine.updateWithStart<number, number>(Quick, "quick-2", undefined, "add", 4);
    expect(result).to.equal(4);
    await engine.shutdown();
  });
});
