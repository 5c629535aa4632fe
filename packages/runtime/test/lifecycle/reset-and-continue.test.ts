import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { RejectedError } from "../../src/core/errors.js";
import { eventually, onEachEngine } from "../runtime/harness.js";
import { TwoStepsThenGo } from "./support/workflows.js";

const charges: string[] = [];

@Workflow("pay")
class Pay {
  constructor(private readonly ctx: Ctx) {}

  async run(n: number): Promise<string> {
    const quote = await this.ctx.step("quote", async () => n);
    const key = await this.ctx.step("charge", async () => {
      charges.push(this.ctx.key());
      return this.ctx.key();
    });
    const go = await this.ctx.waitFor<number>("go");
    return `${quote}/${key}/${go ?? 0}`;
  }
}

@Workflow("loop")
class Loop {
  constructor(private readonly ctx: Ctx) {}

  async run([left, acc]: [number, number]): Promise<number> {
    const v = await this.ctx.step("work", async () => left);
    if (this.ctx.journalSize() > 2) throw new Error(`journal grew to ${this.ctx.journalSize()}`);
    if (left === 0) return acc + v;
    return this.ctx.continueAsNew([left - 1, acc + v]);
  }
}

onEachEngine("reset", (kind) => {
  beforeEach(() => {
    charges.length = 0;
  });

  it("re-runs from the named step with a new run ID and key, replaying earlier steps and reapplying signals", async () => {
    const engine = await kind().open({ workflows: [Pay] });
    const run = await engine.start(Pay, "pay-1", 7);
    await eventually("the wait", async () => ["suspended", "parked"].includes((await run.status()).status));
    await run.signal("go", 1);
    const first = await run.result();
    expect(charges).to.have.length(1);
    const before = await run.status();

    await run.reset("charge");
    const second = await run.result();
    expect(charges, "charge ran again").to.have.length(2);
    expect(second).to.not.equal(first);
    expect(second).to.match(/^7\/.+\/1$/);
    const after = await run.status();
    expect(after.status).to.equal("ok");
    expect(after.runId).to.equal(before.runId + 1);
    const start = (await run.describe()).journal[0];
    expect(start?.kind === "start" && start.from).to.deep.equal({ runId: before.runId, reason: "reset" });
    await engine.shutdown();
  });

  it("hands a running run over to the new run, which the handle follows", async () => {
    const engine = await kind().open({ workflows: [TwoStepsThenGo] });
    const run = await engine.start(TwoStepsThenGo, "r-1", 1);
    await eventually("the wait", async () => ["suspended", "parked"].includes((await run.status()).status));
    await run.reset("b");
    expect((await run.status()).status).to.not.equal("ok");
    await run.signal("go", 10);
    expect(await run.result()).to.equal(13);
    await engine.shutdown();
  });

  it("refuses a step name the run does not have and changes nothing", async () => {
    const engine = await kind().open({ workflows: [TwoStepsThenGo] });
    const run = await engine.start(TwoStepsThenGo, "r-2", 1);
    await eventually("the wait", async () => ["suspended", "parked"].includes((await run.status()).status));
    const err = await run.reset("nope").catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RejectedError);
    expect((err as Error).message)
      .to.contain("'nope'")
      .and.contain("'a'")
      .and.contain("'b'");
    expect((await run.status()).runId).to.equal(1);
    await run.signal("go", 1);
    expect(await run.result()).to.equal(4);
    await engine.shutdown();
  });
});

onEachEngine("continue-as-new", (kind) => {
  it("keeps the ID, starts each run with an empty journal and gives the final run's result", async () => {
    const engine = await kind().open({ workflows: [Loop] });
    const run = await engine.start(Loop, "loop-1", [5, 0]);
    expect(await run.result()).to.equal(15);
    const status = await run.status();
    expect(status.status).to.equal("ok");
    expect(status.runId).to.equal(6);
    const journal = (await run.describe()).journal;
    expect(journal.map((r) => r.kind)).to.deep.equal(["start", "step", "finish"]);
    expect(journal[0]?.kind === "start" && journal[0].from).to.deep.equal({ runId: 5, reason: "continue-as-new" });
    await engine.shutdown();
  });
});
