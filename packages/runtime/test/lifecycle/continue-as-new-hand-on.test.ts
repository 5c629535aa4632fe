import { expect } from "chai";
import { CancelledError } from "../../src/core/errors.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Signal, Update, Workflow } from "../../src/workflow/decorators.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { eventually, onEachEngine } from "../runtime/harness.js";

interface Tally {
  readonly total: number;
  readonly seen: number;
  readonly runs: number;
}

/** Counts `add` signals, continuing as new after every three it sees, until `finish`. */
@Workflow("hand-on-tally")
class Counter {
  private total = 0;
  private seen = 0;
  private done = false;
  constructor(private readonly ctx: Ctx<Counter>) {}

  async run(carry: Tally): Promise<Tally> {
    this.total += carry.total;
    this.seen += carry.seen;
    await this.ctx.condition(() => this.done || this.seen - carry.seen >= 3);
    if (this.done) return { total: this.total, seen: this.seen, runs: carry.runs };
    return this.ctx.continueAsNew({ total: this.total, seen: this.seen, runs: carry.runs + 1 });
  }

  @Signal() add(n: number): void {
    this.total += n;
    this.seen++;
  }

  @Signal() finish(): void {
    this.done = true;
  }

  @Update() async bump(n: number): Promise<number> {
    this.total += n;
    this.seen++;
    return this.total;
  }
}

/** Takes one `item` from its mailbox per run and continues as new, leaving the rest buffered. */
@Workflow("hand-on-mailbox")
class Mailbox {
  constructor(private readonly ctx: Ctx<Mailbox>) {}

  async run(taken: readonly number[]): Promise<readonly number[]> {
    const item = await this.ctx.waitFor<number>("item");
    const now = [...taken, item as number];
    if (item === -1) return now;
    return this.ctx.continueAsNew(now);
  }
}

/** Continues as new once, on `go`, after a step; the next run waits for a cancellation or `end`. */
@Workflow("hand-on-cancel")
class Once {
  private go = false;
  constructor(private readonly ctx: Ctx<Once>) {}

  async run(round: number): Promise<string> {
    if (round === 0) {
      await this.ctx.condition(() => this.go);
      return this.ctx.continueAsNew(1);
    }
    await this.ctx.waitFor("end");
    return "ended";
  }

  @Signal() start(): void {
    this.go = true;
  }
}

const sum = (n: number): number => (n * (n + 1)) / 2;
const waiting = ["suspended", "parked"];

onEachEngine("continue-as-new hands on what its code did not see", (kind) => {
  it("applies every acknowledged signal exactly once across continues-as-new, however they race them", async () => {
    const engine = await kind().open({ workflows: [Counter] });
    const run = await engine.start(Counter, "tally-1", { total: 0, seen: 0, runs: 0 });
    // One burst: the signals reach the run while it continues as new after each third.
    await Promise.all(Array.from({ length: 40 }, (_, i) => run.signal("add", i + 1)));
    await run.signal("finish");
    const tally = await run.result();
    expect(tally.total, "the sum of every acknowledged signal").to.equal(sum(40));
    expect(tally.seen).to.equal(40);
    expect(tally.runs, "the run continued as new").to.be.at.least(1);
    await engine.shutdown();
  });

  it("applies an update accepted while the run continues as new, and answers with the next run's result", async () => {
    const engine = await kind().open({ workflows: [Counter] });
    const run = await engine.start(Counter, "tally-2", { total: 0, seen: 0, runs: 0 });
    const signals = Array.from({ length: 3 }, (_, i) => run.signal("add", i + 1));
    const bumped = run.update<number>("bump", 100, { id: "b-1" });
    await Promise.all(signals);
    const answer = await bumped;
    await run.signal("finish");
    const tally = await run.result();
    expect(tally.total).to.equal(106);
    expect(tally.seen).to.equal(4);
    expect(answer, "the update's answer counts what came before it").to.be.at.least(100);
    expect(await run.update<number>("bump", 5, { id: "b-1" }), "a repeated update ID answers from the first").to.equal(answer);
    await engine.shutdown();
  });

  it("hands the signals no waitFor took to the next run, in order", async () => {
    const engine = await kind().open({ workflows: [Mailbox] });
    const run = await engine.start(Mailbox, "mail-1", []);
    await Promise.all([1, 2, 3, 4, 5].map((n) => run.signal("item", n)));
    await run.signal("item", -1);
    expect(await run.result()).to.deep.equal([1, 2, 3, 4, 5, -1]);
    await engine.shutdown();
  });

  it("hands a cancellation acknowledged while the run continues as new to the next run", async () => {
    const engine = await kind().open({ workflows: [Once] });
    const run = await engine.start(Once, "once-1", 0);
    await eventually("the wait", async () => waiting.includes((await run.status()).status));
    await Promise.all([run.signal("start"), run.cancel()]);
    const error = await run.result().catch((e: unknown) => e);
    expect(error, "the next run was cancelled").to.be.instanceOf(CancelledError);
    const status = await run.status();
    expect(status.status).to.equal("cancelled");
    expect(status.runId).to.equal(2);
    await engine.shutdown();
  });
});

describe("continue-as-new on the test engine", () => {
  it("applies every acknowledged signal exactly once while the run continues as new, with a crash among them", async () => {
    let engine = await TestEngine.create({ workflows: [Counter] });
    const run = await engine.start(Counter, "tally-3", { total: 0, seen: 0, runs: 0 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => run.signal("add", i + 1)));
    engine = await engine.crash();
    const again = engine.run<Tally>("tally-3");
    await Promise.all(Array.from({ length: 20 }, (_, i) => again.signal("add", i + 21)));
    await again.signal("finish");
    expect((await again.result()).total).to.equal(sum(40));
    await engine.shutdown();
  });
});
