import "reflect-metadata";
import { expect } from "chai";
import { NotFoundError, RejectedError, TimeoutError } from "../../src/core/errors.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Update, Workflow } from "../../src/workflow/decorators.js";
import { localKind, type EngineKind } from "../runtime/harness.js";

/** Tokens the workflows sent out, by step name. */
const outbox = new Map<string, string>();

@Workflow()
class Cart {
  private items: string[] = [];
  private open = true;
  private priceDelayMs = 0;
  constructor(private readonly ctx: Ctx) {}

  async run(priceDelayMs: number): Promise<string[]> {
    this.priceDelayMs = priceDelayMs;
    await this.ctx.condition(() => !this.open);
    return this.items;
  }

  @Update({
    validate(item: string) {
      if (item === "") throw new RejectedError("an item needs a name");
    },
  })
  async add(item: string): Promise<number> {
    // The handler takes a while: it waits for a price before it answers.
    await this.ctx.sleep(this.priceDelayMs);
    this.items.push(item);
    return this.items.length;
  }

  @Update() async checkout(): Promise<void> {
    this.open = false;
  }
}

@Workflow()
class Review {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    try {
      return await this.ctx.awaitCompletion<string>("ask", ({ token }) => void outbox.set("ask", token), { waitTimeout: "2 days" });
    } catch (e) {
      if (e instanceof TimeoutError) return `no answer: ${e.message}`;
      throw e;
    }
  }
}

@Workflow()
class Tick {
  async run(): Promise<string> {
    return "tick";
  }
}

describe("update stages", () => {
  let kind: EngineKind;
  beforeEach(() => {
    kind = localKind();
  });
  afterEach(() => kind.cleanup());

  it("should resolve startUpdate once the update is accepted, and its result once completed", async () => {
    const engine = await TestEngine.create({ workflows: [Cart] });
    const run = await engine.start(Cart, "cart-1", 60_000);
    const pending = await run.startUpdate<number>("add", "pen", { id: "add-pen" });
    expect(pending.id).to.equal("add-pen");
    const journal = (await run.describe()).journal;
    expect(journal.some((r) => r.kind === "update" && r.id === "add-pen")).to.equal(true);
    expect(journal.some((r) => r.kind === "update-result")).to.equal(false);
    let settled = false;
    const result = pending.result().then((n) => ((settled = true), n));
    await engine.idle();
    expect(settled).to.equal(false);
    await engine.clock.advance("1 minute");
    expect(await result).to.equal(1);
    expect(await (await run.startUpdate<number>("add", "pen", { id: "add-pen" })).result()).to.equal(1);
    await engine.shutdown();
  });

  it("should reject startUpdate at once when the validator refuses, with nothing journaled", async () => {
    const engine = await TestEngine.create({ workflows: [Cart] });
    const run = await engine.start(Cart, "cart-2", 0);
    const err = await run.startUpdate("add", "").catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RejectedError);
    expect((await run.describe()).journal.map((r) => r.kind)).to.deep.equal(["start"]);
    await engine.shutdown();
  });

  it("should apply an accepted update after a restart and answer its result", async () => {
    let engine = await kind.open({ workflows: [Cart] });
    const run = await engine.start(Cart, "cart-3", 300);
    await run.startUpdate("add", "ink", { id: "add-ink" });
    await engine.shutdown();
    engine = await kind.reopen({ workflows: [Cart] });
    const again = engine.run("cart-3");
    expect(await (await again.startUpdate<number>("add", "ink", { id: "add-ink" })).result()).to.equal(1);
    await again.update("checkout");
    expect(await again.result()).to.deep.equal(["ink"]);
    await engine.shutdown();
  });
});

describe("awaitCompletion's wait timeout", () => {
  let kind: EngineKind;
  beforeEach(() => {
    kind = localKind();
    outbox.clear();
  });
  afterEach(() => kind.cleanup());

  it("should give up with a TimeoutError once the wait passes its timeout", async () => {
    const engine = await TestEngine.create({ workflows: [Review] });
    const run = await engine.start(Review, "review-1");
    await engine.clock.advance("47h");
    expect((await run.status()).status).to.equal("suspended");
    await engine.clock.advance("1h");
    expect(await run.result()).to.equal(`no answer: ctx.awaitCompletion('ask') of review-1 had no answer to its token within ${2 * 86_400_000}ms`);
    await engine.shutdown();
  });

  it("should take an answer that comes in time, also after a restart", async () => {
    let engine = await kind.open({ workflows: [Review] });
    await engine.start(Review, "review-2");
    await engine.idle();
    await engine.shutdown();
    engine = await kind.reopen({ workflows: [Review] });
    await engine.complete(outbox.get("ask")!, "approved");
    expect(await engine.run("review-2").result()).to.equal("approved");
    await engine.shutdown();
  });
});

describe("schedules", () => {
  let kind: EngineKind;
  beforeEach(() => {
    kind = localKind();
  });
  afterEach(() => kind.cleanup());

  it("should list every schedule by name and update a spec in place, keeping its counts", async () => {
    const engine = await TestEngine.create({ workflows: [Tick], startTime: 0 });
    await engine.schedule("b-fast", { workflow: Tick, every: "1 minute", overlap: "allow-all" });
    await engine.schedule("a-slow", { workflow: Tick, every: "1h", overlap: "skip", paused: true });
    await engine.clock.advance("3 minutes");
    expect((await engine.listSchedules()).map((s) => [s.name, s.every, s.paused, s.started])).to.deep.equal([
      ["a-slow", 3_600_000, true, 0],
      ["b-fast", 60_000, false, 3],
    ]);
    await engine.getSchedule("b-fast").update({ workflow: Tick, every: "10 minutes", overlap: "skip" });
    await engine.clock.advance("10 minutes");
    const fast = (await engine.listSchedules()).find((s) => s.name === "b-fast")!;
    expect([fast.every, fast.overlap, fast.started]).to.deep.equal([600_000, "skip", 4]);
    await engine.shutdown();
  });

  it("should refuse to update a deleted schedule", async () => {
    const engine = await TestEngine.create({ workflows: [Tick] });
    const s = await engine.schedule("gone", { workflow: Tick, every: "1h", overlap: "skip" });
    await s.delete();
    const err = await s.update({ workflow: Tick, every: "2h", overlap: "skip" }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(NotFoundError);
    expect(await engine.listSchedules()).to.deep.equal([]);
    await engine.shutdown();
  });

  it("should list schedules with their updated spec after a restart", async () => {
    let engine = await kind.open({ workflows: [Tick] });
    await engine.schedule("daily", { workflow: Tick, cron: "0 2 * * *", overlap: "skip" });
    await engine.getSchedule("daily").update({ workflow: Tick, cron: "0 3 * * *", overlap: "skip" });
    await engine.shutdown();
    engine = await kind.reopen({ workflows: [Tick] });
    expect((await engine.listSchedules()).map((s) => [s.name, s.cron])).to.deep.equal([["daily", "0 3 * * *"]]);
    await engine.shutdown();
  });
});
