import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { NonDeterminismError } from "../../src/core/errors.js";
import { localKind, onEachEngine, eventually } from "./harness.js";

let flip = false;

@Workflow()
class Fickle {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    const a = await this.ctx.step(flip ? "refund" : "charge", async () => 1);
    const r = this.ctx.random();
    await this.ctx.waitFor("go");
    return a + r;
  }
}

@Workflow()
class Dice {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<{ r: number; u: string; t: number }> {
    const first = { r: this.ctx.random(), u: this.ctx.uuid(), t: this.ctx.now() };
    await this.ctx.waitFor("go");
    const again = { r: this.ctx.random(), u: this.ctx.uuid(), t: this.ctx.now() };
    return { r: first.r + again.r, u: `${first.u}/${again.u}`, t: first.t };
  }
}

onEachEngine("determinism", (kind) => {
  afterEach(() => {
    flip = false;
  });

  it("fails a replay whose code asks for another step than the journal holds, naming both", async () => {
    const engine = await kind().open({ workflows: [Fickle] }, (c) => c.cache(1));
    const run = await engine.start(Fickle, "fickle-1", undefined);
    await eventually("the wait", async () => (await run.status()).status === "suspended");
    flip = true;
    // Another run takes the only cache slot, so the first one is parked and must replay.
    const other = await engine.start(Fickle, "fickle-2", undefined);
    await eventually("fickle-1 parked", async () => (await run.status()).status === "parked");
    const err = await run.query("anything").catch((e: unknown) => e);
    expect(err).to.be.instanceOf(NonDeterminismError);
    const message = (err as Error).message;
    expect(message).to.contain("fickle-1").and.contain("position 1").and.contain("'charge'").and.contain("'refund'");
    expect(await run.result().catch((e: unknown) => e)).to.be.instanceOf(NonDeterminismError);
    expect((await run.status()).error).to.contain("'refund'");
    await other.signal("go");
    await other.result();
    await engine.shutdown();
  });

  it("gives the same random numbers, UUIDs and times on replay", async () => {
    const engine = await kind().open({ workflows: [Dice] }, (c) => c.cache(1));
    const a = await engine.start(Dice, "dice-1", undefined);
    const b = await engine.start(Dice, "dice-2", undefined);
    await eventually("dice-1 parked", async () => (await a.status()).status === "parked");
    await a.signal("go");
    await b.signal("go");
    const ra = await a.result();
    const rb = await b.result();
    expect(ra.u).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\/[0-9a-f-]{36}$/);
    expect(ra.r).to.not.equal(rb.r);
    const start = (await a.describe()).journal[0];
    expect(ra.t).to.equal(start?.at);
    await engine.shutdown();
  });
});

describe("determinism across a restart (local)", () => {
  it("reports the first difference when new code replays an old journal", async () => {
    const local = localKind();
    try {
      const first = await local.open({ workflows: [Fickle] });
      const run = await first.start(Fickle, "fickle-restart", undefined);
      await eventually("the wait", async () => (await run.status()).status === "suspended");
      await first.shutdown();
      flip = true;
      const engine = await local.reopen({ workflows: [Fickle] });
      const err = await engine
        .run("fickle-restart")
        .result()
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(NonDeterminismError);
      expect((err as Error).message)
        .to.contain("journal holds step 'charge'")
        .and.contain("asked for step 'refund'");
      await engine.shutdown();
    } finally {
      flip = false;
      await local.cleanup();
    }
  });
});
