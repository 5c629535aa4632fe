import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { CancelledError, RejectedError, TerminatedError } from "../../src/core/errors.js";
import { eventually, onEachEngine } from "../runtime/harness.js";
import { Stubborn } from "./support/workflows.js";

const cleanups: string[] = [];

@Workflow()
class Booking {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.step("reserve", async () => "room");
    try {
      await this.ctx.sleep("1h");
      return "kept";
    } catch (e) {
      if (!(e instanceof CancelledError)) throw e;
      await this.ctx.step("release", async () => {
        cleanups.push(this.ctx.workflowId);
        return true;
      });
      throw e;
    }
  }
}

onEachEngine("cancel and terminate", (kind) => {
  beforeEach(() => {
    cleanups.length = 0;
  });

  it("delivers a cancellation at the current wait so clean-up steps run, ending the run cancelled", async () => {
    const engine = await kind().open({ workflows: [Booking] });
    const run = await engine.start(Booking, "b-1", undefined);
    await eventually("the sleep", async () => (await run.status()).status === "suspended");
    await run.cancel("guest left");
    const err = await run.result().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CancelledError);
    expect((err as Error).message).to.contain("guest left");
    expect(cleanups).to.deep.equal(["b-1"]);
    expect((await run.status()).status).to.equal("cancelled");
    await engine.shutdown();
  });

  it("lets a workflow catch the cancellation and finish normally", async () => {
    const engine = await kind().open({ workflows: [Stubborn] });
    const run = await engine.start(Stubborn, "s-1", undefined);
    await eventually("the wait", async () => (await run.status()).status === "suspended");
    await run.cancel();
    expect(await run.result()).to.equal("ignored the cancellation");
    expect((await run.status()).status).to.equal("ok");
    await engine.shutdown();
  });

  it("ends a run at once on terminate; waiters get TerminatedError and later calls are rejected", async () => {
    const engine = await kind().open({ workflows: [Booking] });
    const run = await engine.start(Booking, "b-2", undefined);
    const waiting = run.result().catch((e: unknown) => e);
    await eventually("the sleep", async () => (await run.status()).status === "suspended");
    await run.terminate("fraud");
    const err = await waiting;
    expect(err).to.be.instanceOf(TerminatedError);
    expect((err as Error).message)
      .to.contain("fraud")
      .and.contain("b-2");
    expect((await run.status()).status).to.equal("terminated");
    expect(cleanups).to.deep.equal([]);
    expect(await run.cancel().catch((e: unknown) => e)).to.be.instanceOf(RejectedError);
    expect(await run.terminate().catch((e: unknown) => e)).to.be.instanceOf(RejectedError);
    await engine.shutdown();
  });
});
