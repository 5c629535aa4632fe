import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Query, Signal, Step, Workflow } from "../../src/workflow/decorators.js";
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
});
