import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { RejectedError } from "../../src/core/errors.js";
import { eventually, localKind, onEachEngine } from "../runtime/harness.js";

@Workflow("refund")
class OldRefund {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    const a = await this.ctx.step("a", async () => 1);
    await this.ctx.waitFor("go");
    return a;
  }
}

@Workflow({ name: "refund", patches: ["early", "rounding"] })
class NewRefund {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    const early = this.ctx.patched("early");
    const a = await this.ctx.step("a", async () => 1);
    await this.ctx.waitFor("go");
    const fixed = this.ctx.patched("rounding");
    return a + (fixed ? 10 : 0) + (early ? 100 : 0);
  }
}

@Workflow({ name: "strict", patches: ["known"] })
class Strict {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    try {
      this.ctx.patched("unknown" as "known");
      return "accepted";
    } catch (e) {
      return e instanceof RejectedError ? (e as Error).message : "other";
    }
  }
}

@Workflow("order")
class OrderFlow {
  constructor(private readonly ctx: Ctx) {}
  async run(amount: number): Promise<number> {
    this.ctx.setAttributes({ customer: "c-1", amount });
    if (amount > 100) throw new Error("too big");
    this.ctx.setAttributes({ stage: "paid" });
    return amount;
  }
}

describe("patching (local)", () => {
  it("takes new paths in new runs and where an old run reaches them, not where it passed them", async () => {
    const local = localKind();
    try {
      const first = await local.open({ workflows: [OldRefund] });
      const old = await first.start(OldRefund, "old", undefined);
      await eventually("the wait", async () => (await old.status()).status === "suspended");
      await first.shutdown();

      const engine = await local.reopen({ workflows: [NewRefund] });
      const again = engine.run<number>("old");
      await again.signal("go");
      expect(await again.result()).to.equal(11);
      const fresh = await engine.start(NewRefund, "new", undefined);
      await fresh.signal("go");
      expect(await fresh.result()).to.equal(111);
      const patches = (await fresh.describe()).journal.filter((r) => r.kind === "patch").map((r) => (r.kind === "patch" ? r.id : ""));
      expect(patches).to.deep.equal(["early", "rounding"]);
      await engine.shutdown();
    } finally {
      await local.cleanup();
    }
  });
});

onEachEngine("patches and search attributes", (kind) => {
  it("refuses a patch ID the workflow does not declare", async () => {
    const engine = await kind().open({ workflows: [Strict] });
    const message = await (await engine.start(Strict, "strict-1", undefined)).result();
    expect(message).to.contain("'unknown'").and.contain("strict");
    await engine.shutdown();
  });

  it("merges attributes durably and filters on them, on type, status and times", async () => {
    const engine = await kind().open({ workflows: [OrderFlow] });
    for (const [i, amount] of [50, 150, 80].entries()) {
      await (await engine.start(OrderFlow, `o-${i}`, amount)).result().catch(() => undefined);
    }
    const ids = async (filter: Record<string, unknown>): Promise<string[]> => (await engine.listWhere(filter, 100)).map((s) => s.id).sort();
    expect(await ids({ customer: "c-1" })).to.deep.equal(["o-0", "o-1", "o-2"]);
    expect(await ids({ status: "failed" })).to.deep.equal(["o-1"]);
    expect(await ids({ amount: { gte: 60, lt: 200 }, stage: "paid" })).to.deep.equal(["o-2"]);
    expect(await ids({ amount: { in: [50, 80] } })).to.deep.equal(["o-0", "o-2"]);
    expect(await ids({ amount: { ne: 50 }, type: "order" })).to.deep.equal(["o-1", "o-2"]);
    expect(await ids({ startedAt: { gt: Date.now() + 60_000 } })).to.deep.equal([]);
    expect(await ids({ endedAt: { lte: Date.now() } })).to.deep.equal(["o-0", "o-1", "o-2"]);
    expect(await engine.listWhere({ amount: { near: 3 } }, 10).catch((e: unknown) => e)).to.be.instanceOf(RejectedError);
    const status = await engine.status("o-2");
    expect(status?.attributes).to.deep.equal({ customer: "c-1", amount: 80, stage: "paid" });
    await engine.shutdown();
  });
});
