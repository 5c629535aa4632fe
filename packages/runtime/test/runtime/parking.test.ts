import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Query, Signal, Step, Update, Workflow } from "../../src/workflow/decorators.js";
import type { RunHandle } from "../../src/client/run-handle.js";
import { eventually, onEachEngine } from "./harness.js";

let executions = 0;

@Workflow()
class Tally {
  private total = 0;
  constructor(private readonly ctx: Ctx) {}

  async run(start: number): Promise<number> {
    this.total = await this.begin(start);
    await this.ctx.condition(() => this.total >= 100);
    return this.total;
  }

  @Step() async begin(n: number): Promise<number> {
    executions++;
    return n;
  }

  @Signal() add(n: number): void {
    this.total += n;
  }

  @Query() value(): number {
    return this.total;
  }
}

/** Runs a step that never returns, which keeps it in memory. */
@Workflow()
class Busy {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<void> {
    await this.ctx.step("hang", () => new Promise<void>(() => undefined));
  }
}

/** Waits until told, and answers updates meanwhile. */
@Workflow()
class Counter {
  private total = 0;
  private done = false;
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    await this.ctx.condition(() => this.done);
    return this.total;
  }

  @Update() async add(n: number): Promise<number> {
    this.total += n;
    return this.total;
  }

  @Signal() finish(): void {
    this.done = true;
  }
}

onEachEngine("parking", (kind) => {
  beforeEach(() => {
    executions = 0;
  });

  it("keeps at most `cache` runs in memory and replays parked ones for queries and signals", async () => {
    const engine = await kind().open({ workflows: [Tally] }, (c) => c.cache(2));
    const runs: RunHandle<number>[] = [];
    for (let i = 0; i < 6; i++) runs.push(await engine.start(Tally, `tally-${i}`, i * 10));
    await eventually("all waiting", async () => {
      const statuses = await Promise.all(runs.map(async (r) => (await r.status()).status));
      return statuses.every((s) => s === "suspended" || s === "parked");
    });
    const statuses = await Promise.all(runs.map(async (r) => (await r.status()).status));
    expect(statuses.filter((s) => s === "suspended").length).to.be.at.most(2);
    expect(statuses.filter((s) => s === "parked").length).to.be.at.least(4);

    const parked = runs[statuses.indexOf("parked")]!;
    const index = runs.indexOf(parked);
    expect(await parked.query<number>("value")).to.equal(index * 10);
    await parked.signal("add", 100);
    expect(await parked.result()).to.equal(index * 10 + 100);
    expect(executions, "replays answered the step from the journal").to.equal(6);
    for (const r of runs) if (r !== parked) await r.signal("add", 100);
    for (const r of runs) expect(await r.result()).to.be.at.least(100);
    await engine.shutdown();
  });

  it("answers an update of a parked run while the only room in memory is taken by a run whose step runs", async () => {
    const engine = await kind().open({ workflows: [Busy, Counter] }, (c) => c.cache(1));
    const counter = await engine.start(Counter, "counter-waits");
    await eventually("the counter waits", async () => ["suspended", "parked"].includes((await counter.status()).status));
    await engine.start(Busy, "busy-1");
    await eventually("the counter parked", async () => (await counter.status()).status === "parked");
    expect(await counter.update<number>("add", 5), "answered though the busy run keeps the room").to.equal(5);
    await counter.signal("finish");
    expect(await counter.result()).to.equal(5);
    await engine.shutdown();
  });
});
