import { expect } from "chai";
import { CancelledError } from "../../src/core/errors.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Signal, Workflow } from "../../src/workflow/decorators.js";
import type { ChildOptions } from "../../src/workflow/ctx-options.js";
import { eventually, onEachEngine } from "../runtime/harness.js";

/** Two steps, then counts `add` signals until `finish`. */
@Workflow("replaced-tally")
class Tally {
  private total = 0;
  private done = false;
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    await this.ctx.step("a", async () => 1);
    await this.ctx.step("b", async () => 2);
    await this.ctx.condition(() => this.done);
    return this.total;
  }

  @Signal() add(n: number): void {
    this.total += n;
  }

  @Signal() finish(): void {
    this.done = true;
  }
}

/** Waits until told, and returns what it was told. */
@Workflow("replaced-kid")
class Kid {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    return (await this.ctx.waitFor<string>("done")) ?? "";
  }
}

/** Starts a child with the close policy its input names, then continues as new and waits. */
@Workflow("replaced-parent")
class ContinuingParent {
  constructor(private readonly ctx: Ctx<ContinuingParent>) {}
  async run(input: { close: NonNullable<ChildOptions["close"]>; round: number }): Promise<void> {
    if (input.round === 0) {
      await this.ctx.startChild("replaced-kid", `kid-of-${this.ctx.workflowId}`, undefined, { close: input.close });
      return this.ctx.continueAsNew({ ...input, round: 1 });
    }
    await this.ctx.waitFor("never");
  }
}

/** A step, a child started and awaited, and a step with the child's answer. */
@Workflow("replaced-family")
class Family {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    await this.ctx.step("before", async () => 0);
    const child = await this.ctx.startChild<string>("replaced-kid", `kid-of-${this.ctx.workflowId}`);
    const told = await this.ctx.step("after", async () => "after");
    return `${told}:${await child.result()}`;
  }
}

/** Carries its search attributes over a continue-as-new, or replaces them when its input says so. */
@Workflow("replaced-attributes")
class Tagged {
  constructor(private readonly ctx: Ctx<Tagged>) {}
  async run(round: number): Promise<Readonly<Record<string, unknown>>> {
    if (round === 0) {
      this.ctx.setAttributes({ stage: "first" });
      return this.ctx.continueAsNew(1);
    }
    if (round === 1) {
      await this.ctx.waitFor("go");
      return this.ctx.continueAsNew(2, { attributes: { tier: "silver" } });
    }
    await this.ctx.waitFor("go");
    return this.ctx.attributes();
  }
}

const waiting = ["suspended", "parked"];
const sum = (n: number): number => (n * (n + 1)) / 2;

onEachEngine("a reset while calls arrive", (kind) => {
  it("applies every signal acknowledged while the reset is under way to the new run", async () => {
    const engine = await kind().open({ workflows: [Tally] });
    const run = await engine.start(Tally, "reset-signals", undefined);
    await eventually("the wait", async () => waiting.includes((await run.status()).status));
    const reset = run.reset("b");
    const signals = Array.from({ length: 20 }, (_, i) => run.signal("add", i + 1));
    await Promise.all([reset, ...signals]);
    await run.signal("finish");
    expect(await run.result()).to.equal(sum(20));
    expect((await run.status()).runId).to.equal(2);
    await engine.shutdown();
  });

  it("cancels the new run when the cancellation was acknowledged while the reset was under way", async () => {
    const engine = await kind().open({ workflows: [Tally] });
    const run = await engine.start(Tally, "reset-cancel", undefined);
    await eventually("the wait", async () => waiting.includes((await run.status()).status));
    const reset = run.reset("b");
    const cancel = run.cancel();
    await Promise.all([reset, cancel]);
    expect(await run.result().catch((e: unknown) => e)).to.be.instanceOf(CancelledError);
    const status = await run.status();
    expect(status.status).to.equal("cancelled");
    expect(status.runId).to.equal(2);
    await engine.shutdown();
  });
});

onEachEngine("children of a run that is replaced", (kind) => {
  for (const [close, expected] of [
    ["terminate", "terminated"],
    ["request-cancel", "cancelled"],
    ["abandon", "suspended"],
  ] as const) {
    it(`applies close policy '${close}' to the children of a run that continues as new`, async () => {
      const engine = await kind().open({ workflows: [ContinuingParent, Kid] });
      const parent = await engine.start(ContinuingParent, `can-${close}`, { close, round: 0 });
      await eventually("the next run", async () => (await parent.status()).runId === 2 && waiting.includes((await parent.status()).status));
      const kid = engine.run(`kid-of-can-${close}`);
      const want = expected === "suspended" ? waiting : [expected];
      await eventually(`the child ${expected}`, async () => want.includes((await kid.status()).status));
      await engine.shutdown();
    });
  }

  it("closes the children started after the step a run is reset to, so the new run starts them again", async () => {
    const engine = await kind().open({ workflows: [Family, Kid] });
    const run = await engine.start(Family, "reset-before-child", undefined);
    const kid = engine.run("kid-of-reset-before-child");
    await eventually("the child", async () => waiting.includes((await kid.status().catch(() => ({ status: "none" }))).status));
    await run.reset("before");
    await eventually("the new child", async () => {
      const s = await kid.status();
      return s.runId === 2 && waiting.includes(s.status);
    });
    await kid.signal("done", "again");
    expect(await run.result()).to.equal("after:again");
    expect((await run.status()).runId).to.equal(2);
    await engine.shutdown();
  });

  it("lets the children started before the step a run is reset to report to the new run", async () => {
    const engine = await kind().open({ workflows: [Family, Kid] });
    const run = await engine.start(Family, "reset-after-child", undefined);
    const kid = engine.run("kid-of-reset-after-child");
    await eventually("the step after the child", async () =>
      (await run.describe()).journal.some((r) => r.kind === "step" && r.name === "after"),
    );
    await run.reset("after");
    await kid.signal("done", "kept");
    expect(await run.result()).to.equal("after:kept");
    expect((await kid.status()).runId, "the child was not started again").to.equal(1);
    await engine.shutdown();
  });
});

onEachEngine("search attributes across continue-as-new", (kind) => {
  it("carries the run's attributes to the next run, or replaces them when asked", async () => {
    const engine = await kind().open({ workflows: [Tagged] });
    const run = await engine.start(Tagged, "tagged-1", 0, { attributes: { tier: "gold", region: "eu" } });
    await eventually("the second run", async () => (await run.status()).runId === 2 && waiting.includes((await run.status()).status));
    expect((await run.status()).attributes).to.deep.equal({ tier: "gold", region: "eu", stage: "first" });
    expect((await engine.listWhere({ tier: "gold" }, 10)).map((s) => s.id)).to.deep.equal(["tagged-1"]);
    await run.signal("go", 1);
    await eventually("the third run", async () => (await run.status()).runId === 3 && waiting.includes((await run.status()).status));
    expect((await run.status()).attributes).to.deep.equal({ tier: "silver" });
    expect(await engine.listWhere({ tier: "gold" }, 10)).to.deep.equal([]);
    await run.signal("go", 1);
    expect(await run.result(), "ctx.attributes() in the run").to.deep.equal({ tier: "silver" });
    await engine.shutdown();
  });
});
