import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Query, Signal, Update, Workflow } from "../../src/workflow/decorators.js";
import { AlreadyExistsError, RejectedError } from "../../src/core/errors.js";
import { localKind, onEachEngine, type EngineKind } from "./harness.js";

const priced: string[] = [];

@Workflow("cart")
class Cart {
  private readonly items: string[] = [];
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string[]> {
    await this.ctx.waitFor("checkout");
    return this.items;
  }

  @Query() list(): string[] {
    return this.items;
  }

  @Query() count(extra: number): number {
    return this.items.length + extra;
  }

  @Update({
    validate(item: string) {
      if (!item) throw new RejectedError("empty item");
    },
  })
  async add(item: string): Promise<number> {
    const price = await this.ctx.step("price", async () => {
      priced.push(item);
      return item.length * 10;
    });
    this.items.push(item);
    return price;
  }
}

@Workflow("counter")
class Counter {
  private n = 0;
  private stopped = false;
  constructor(private readonly ctx: Ctx) {}

  async run(start: number): Promise<number> {
    this.n += start;
    await this.ctx.condition(() => this.stopped);
    return this.n;
  }

  @Update() inc(by: number): number {
    this.n += by;
    return this.n;
  }

  @Signal() stop(): void {
    this.stopped = true;
  }
}

onEachEngine("queries and updates", (kind) => {
  beforeEach(() => {
    priced.length = 0;
  });

  it("answers updates once per ID, rejects invalid ones without recording, and answers queries", async () => {
    const engine = await kind().open({ workflows: [Cart] });
    const run = await engine.start(Cart, "cart-1", undefined);
    expect(await run.update<number>("add", "apple", { id: "u-1" })).to.equal(50);
    expect(await run.update<number>("add", "apple", { id: "u-1" }), "a retried ID gets the recorded result").to.equal(50);
    expect(priced).to.deep.equal(["apple"]);

    const rejected = await run.update("add", "").catch((e: unknown) => e);
    expect(rejected).to.be.instanceOf(RejectedError);
    expect((rejected as Error).message).to.contain("empty");

    expect(await run.query<string[]>("list")).to.deep.equal(["apple"]);
    expect(await run.query<number>("count", 10)).to.equal(11);
    const unknown = await run.query("nope").catch((e: unknown) => e);
    expect(unknown).to.be.instanceOf(RejectedError);
    expect((unknown as Error).message)
      .to.contain("'nope'")
      .and.contain("cart-1");

    const journal = (await run.describe()).journal;
    expect(journal.filter((r) => r.kind === "update")).to.have.length(1);
    expect(journal.filter((r) => r.kind === "update-result")).to.have.length(1);

    await run.signal("checkout");
    expect(await run.result()).to.deep.equal(["apple"]);
    await engine.shutdown();
  });

  it("writes updateWithStart as one start record, then routes to the running run", async () => {
    const engine = await kind().open({ workflows: [Counter] });
    const { run, result } = await engine.updateWithStart<number, number>(Counter, "c-1", 10, "inc", 5);
    expect(result).to.equal(15);
    const journal = (await run.describe()).journal;
    expect(journal[0]?.kind).to.equal("start");
    expect(journal[0]?.kind === "start" && journal[0].update?.name).to.equal("inc");
    expect(journal.filter((r) => r.kind === "update")).to.have.length(0);

    const again = await engine.updateWithStart<number, number>(Counter, "c-1", 99, "inc", 1);
    expect(again.result).to.equal(16);
    await run.signal("stop");
    expect(await run.result()).to.equal(16);
    await engine.shutdown();
  });

  it("runs the validator of an updateWithStart that starts the run: the refused update is answered RejectedError and its handler never runs", async () => {
    const engine = await kind().open({ workflows: [Cart] });
    const refused = await engine.updateWithStart(Cart, "cart-uws", undefined, "add", "").catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(RejectedError);
    expect((refused as Error).message).to.contain("empty");
    expect(priced, "the handler's step never ran").to.deep.equal([]);
    const run = engine.run<string[]>("cart-uws");
    expect(await run.query<string[]>("list")).to.deep.equal([]);
    const again = await engine.updateWithStart(Cart, "cart-uws", undefined, "add", "pear");
    expect(again.result).to.equal(40);
    await run.signal("checkout");
    expect(await run.result()).to.deep.equal(["pear"]);
    await engine.shutdown();
  });

  it("applies the ID policy of updateWithStart to a running run: fail, terminate and start anew, or use it", async () => {
    const engine = await kind().open({ workflows: [Counter] });
    const first = await engine.start(Counter, "c-policy", 1);
    const refused = await engine
      .updateWithStart(Counter, "c-policy", 50, "inc", 5, { idPolicy: { running: "fail" } })
      .catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(AlreadyExistsError);
    expect((refused as Error).message).to.contain("c-policy");
    expect((await first.describe()).journal.map((r) => r.kind)).to.deep.equal(["start"]);

    const used = await engine.updateWithStart<number, number>(Counter, "c-policy", 50, "inc", 5, { idPolicy: { running: "use-existing" } });
    expect(used.result).to.equal(6);

    const replaced = await engine.updateWithStart<number, number>(Counter, "c-policy", 50, "inc", 5, {
      idPolicy: { running: "terminate-existing" },
    });
    expect(replaced.result).to.equal(55);
    const status = await engine.status("c-policy");
    expect(status?.runId).to.equal(2);
    await replaced.run.signal("stop");
    expect(await replaced.run.result()).to.equal(55);
    await engine.shutdown();
  });

  it("refuses an update with a name the workflow does not have", async () => {
    const engine = await kind().open({ workflows: [Counter] });
    const run = await engine.start(Counter, "c-2", 1);
    const err = await run.update("dec", 1).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RejectedError);
    expect((err as Error).message)
      .to.contain("'dec'")
      .and.contain("'inc'");
    expect((await run.describe()).journal.map((r) => r.kind)).to.deep.equal(["start"]);
    await run.signal("stop");
    expect(await run.result()).to.equal(1);
    await engine.shutdown();
  });
});

describe("queries and updates across a restart (local)", () => {
  let local: EngineKind;
  const kind = (): EngineKind => local;
  beforeEach(() => {
    priced.length = 0;
    local = localKind();
  });
  afterEach(() => local.cleanup());

  it("keeps update deduplication and state across a restart", async () => {
    const first = await kind().open({ workflows: [Cart] });
    const started = await first.start(Cart, "cart-2", undefined);
    expect(await started.update<number>("add", "apple", { id: "u-1" })).to.equal(50);
    await first.shutdown();

    const engine = await kind().reopen({ workflows: [Cart] });
    const run = engine.run<string[]>("cart-2");
    expect(await run.update<number>("add", "apple", { id: "u-1" })).to.equal(50);
    expect(await run.update<number>("add", "pear")).to.equal(40);
    expect(await run.query<string[]>("list")).to.deep.equal(["apple", "pear"]);
    await run.signal("checkout");
    expect(await run.result()).to.deep.equal(["apple", "pear"]);
    expect(priced, "the price step of u-1 ran once").to.deep.equal(["apple", "pear"]);
    await engine.shutdown();
  });
});
