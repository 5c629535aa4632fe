import "reflect-metadata";
import { expect } from "chai";
import { RejectedError } from "../../src/core/errors.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Signal, Workflow } from "../../src/workflow/decorators.js";
import { localKind, type EngineKind } from "../runtime/harness.js";

@Workflow()
class Quote {
  async run(order: { sku: string; qty: number }): Promise<number> {
    return order.qty * 10;
  }
}

@Workflow()
class Heartbeat {
  async run(): Promise<string> {
    return "alive";
  }
}

@Workflow()
class Checkout {
  constructor(private readonly ctx: Ctx) {}

  async run(sku: string): Promise<string> {
    const cents: number = await this.ctx.executeChild(Quote, `quote-${sku}`, { sku, qty: 3 });
    const child = await this.ctx.startChild(Heartbeat, `beat-${sku}`);
    const beat: string = await child.result();
    return `${sku}: ${cents} (${beat})`;
  }

  /** Never run: the calls below must not compile, each for the reason named. */
  async wrong(): Promise<void> {
    // @ts-expect-error the child's input has no qty
    await this.ctx.executeChild(Quote, "q", { sku: "x" });
    // @ts-expect-error the child resolves with a number, not a string
    const text: string = await this.ctx.executeChild(Quote, "q", { sku: "x", qty: 1 });
    // @ts-expect-error a child that takes no input is given one
    await this.ctx.startChild(Heartbeat, "b", 42);
    void text;
  }
}

@Workflow()
class Countdown {
  constructor(private readonly ctx: Ctx<Countdown>) {}

  async run(left: number): Promise<string> {
    if (left > 0) return this.ctx.continueAsNew(left - 1);
    return `done after run ${this.ctx.runId()}`;
  }

  /** Never run. */
  async wrong(): Promise<never> {
    // @ts-expect-error continueAsNew takes run's input (a number)
    return this.ctx.continueAsNew("three");
  }
}

@Workflow()
class Ticket {
  private closing = false;
  constructor(private readonly ctx: Ctx) {}

  async run(title: string): Promise<Record<string, unknown>> {
    const seen = this.ctx.attributes();
    this.ctx.setAttributes({ title, tags: [...((seen.tags as string[] | undefined) ?? []), "triaged"] });
    await this.ctx.condition(() => this.closing);
    this.ctx.removeAttributes("priority");
    return { ...this.ctx.attributes() };
  }

  @Signal() close(): void {
    this.closing = true;
  }
}

describe("typed workflow inputs and results", () => {
  it("should start a workflow that takes no input without one", async () => {
    const engine = await TestEngine.create({ workflows: [Heartbeat] });
    const run = await engine.start(Heartbeat, "beat-1");
    const result: string = await run.result();
    expect(result).to.equal("alive");
    // @ts-expect-error a workflow that takes no input is given one
    await engine.start(Heartbeat, "beat-2", 1).catch(() => undefined);
    // @ts-expect-error the input must have a qty
    await engine.start(Quote, "quote-1", { sku: "a" }).catch(() => undefined);
    await engine.shutdown();
  });

  it("should run typed children and continue-as-new with typed input", async () => {
    const engine = await TestEngine.create({ workflows: [Checkout, Quote, Heartbeat, Countdown] });
    expect(await (await engine.start(Checkout, "checkout-1", "pen")).result()).to.equal("pen: 30 (alive)");
    expect(await (await engine.start(Countdown, "countdown-1", 3)).result()).to.equal("done after run 4");
    await engine.shutdown();
  });
});

describe("search attributes", () => {
  let kind: EngineKind;
  beforeEach(() => {
    kind = localKind();
  });
  afterEach(() => kind.cleanup());

  it("should set attributes at start, read them in workflow code, remove them, and match tags by membership", async () => {
    const engine = await TestEngine.create({ workflows: [Ticket] });
    const a = await engine.start(Ticket, "ticket-a", "printer on fire", { attributes: { tags: ["hardware"], priority: 1 } });
    await engine.start(Ticket, "ticket-b", "password reset", { attributes: { tags: ["account"] } });
    await engine.idle();
    expect((await engine.listWhere({ tags: { has: "hardware" } })).map((r) => r.id)).to.deep.equal(["ticket-a"]);
    expect((await engine.listWhere({ tags: { has: "triaged" } })).map((r) => r.id).sort()).to.deep.equal(["ticket-a", "ticket-b"]);
    expect((await engine.listWhere({ priority: 1 })).map((r) => r.id)).to.deep.equal(["ticket-a"]);
    await a.signal("close", undefined);
    expect(await a.result()).to.deep.equal({ tags: ["hardware", "triaged"], title: "printer on fire" });
    expect(await engine.listWhere({ priority: 1 })).to.deep.equal([]);
    expect((await a.status()).attributes).to.deep.equal({ tags: ["hardware", "triaged"], title: "printer on fire" });
    await engine.shutdown();
  });

  it("should refuse start attributes with a bad name before anything is written", async () => {
    const engine = await TestEngine.create({ workflows: [Ticket] });
    const err = await engine.start(Ticket, "ticket-c", "x", { attributes: { "": 1 } }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RejectedError);
    expect(await engine.status("ticket-c")).to.equal(undefined);
    await engine.shutdown();
  });

  it("should keep start attributes and removals across a restart", async () => {
    let engine = await kind.open({ workflows: [Ticket] });
    await engine.start(Ticket, "ticket-d", "disk full", { attributes: { tags: ["storage"], priority: 2 } });
    await engine.idle();
    await engine.shutdown();
    engine = await kind.reopen({ workflows: [Ticket] });
    expect((await engine.listWhere({ tags: { has: "storage" } })).map((r) => r.id)).to.deep.equal(["ticket-d"]);
    await engine.run("ticket-d").signal("close", undefined);
    expect(await engine.run("ticket-d").result()).to.deep.equal({ tags: ["storage", "triaged"], title: "disk full" });
    await engine.shutdown();
    engine = await kind.reopen({ workflows: [Ticket] });
    expect((await engine.status("ticket-d"))!.attributes).to.deep.equal({ tags: ["storage", "triaged"], title: "disk full" });
    expect(await engine.listWhere({ priority: 2 })).to.deep.equal([]);
    await engine.shutdown();
  });
});
