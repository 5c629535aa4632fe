import "reflect-metadata";
import { expect } from "chai";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { container } from "tsyringe";
import { CancelledError, NonDeterminismError, NotFoundError, RejectedError } from "../../src/core/errors.js";
import type { Engine } from "../../src/engine/engine.js";
import { exportFileName, readExport, writeExport } from "../../src/replay/export-file.js";
import type { ExportedJournal } from "../../src/replay/export-format.js";
import { exportJournal } from "../../src/replay/export-journal.js";
import { replayRegressions, type DefineTest } from "../../src/replay/replay-regressions.js";
import { Replayer, type ReplayResult } from "../../src/replay/replayer.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Query, Signal, Step, Update, Workflow } from "../../src/workflow/decorators.js";
import { registerType } from "../../src/workflow/payload-types.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { eventually, openLocal, tempDir } from "./helpers.js";

/** Steps that ran, in this process, by name. */
const ran: string[] = [];

@Workflow("pay")
class PayRecorded {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    const q = await this.ctx.step("quote", async () => {
      ran.push("quote");
      return 3;
    });
    return this.ctx.step("charge", async () => {
      ran.push("charge");
      return q * 2;
    });
  }
}

@Workflow("pay")
class PaySame {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    const q = await this.ctx.step("quote", async () => {
      ran.push("quote (same)");
      return 0;
    });
    return this.ctx.step("charge", async () => {
      ran.push("charge (same)");
      return q;
    });
  }
}

@Workflow("pay")
class PayChanged {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    const q = await this.ctx.step("quote", async () => 3);
    return this.ctx.step("refund", async () => q);
  }
}

@Workflow("pay")
class PayLonger {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    const q = await this.ctx.step("quote", async () => 3);
    const c = await this.ctx.step("charge", async () => q * 2);
    return this.ctx.step("ship", async () => {
      ran.push("ship");
      return c;
    });
  }
}

class Money {
  constructor(
    public cents = 0,
    public currency = "EUR",
  ) {}
  label(): string {
    return `${this.cents} ${this.currency}`;
  }
}
registerType(Money);

@Workflow()
class Child {
  async run(n: number): Promise<number> {
    return n * 10;
  }
}

const tokens: string[] = [];

/** Makes every kind of journal record the engine writes. */
@Workflow({ patches: ["v2"] })
class Everything {
  private approved = false;
  private items: string[] = [];

  constructor(private readonly ctx: Ctx) {}

  async run(input: { at: Date; price: Money }): Promise<string> {
    const price = await this.quote(input.price);
    let declined = "";
    try {
      await this.decline();
    } catch (e) {
      declined = (e as Error).message;
    }
    if (this.ctx.patched("v2")) this.ctx.setAttributes({ tier: "gold", amount: price.cents });
    await this.ctx.step("tracked", async () => {
      this.ctx.heartbeat({ done: 1 });
      return "tracked";
    });
    await this.ctx.sleep("5ms");
    const note = await this.ctx.waitFor<string>("note");
    await this.ctx.condition(() => this.approved);
    const approval = await this.ctx.awaitCompletion<string>("approval", ({ token }) => {
      tokens.push(token);
    });
    const child = await this.ctx.executeChild(Child, `${this.ctx.workflowId}-child`, 4);
    const late = await this.ctx.waitFor<string>("never", { timeout: "5ms" });
    return [price.label(), declined, note, approval, child, late ?? "timeout", this.items.join("+"), input.at.toISOString()].join("/");
  }

  @Step({ type: Money }) async quote(price: Money): Promise<Money> {
    return new Money(price.cents + 1, price.currency);
  }

  @Step({ retry: RetryPolicy.none() }) async decline(): Promise<never> {
    throw new RejectedError("card declined");
  }

  @Signal() approve(ok: boolean): void {
    this.approved = ok;
  }

  @Query() list(): string[] {
    return this.items;
  }

  @Update() async add(item: string): Promise<number> {
    const price = await this.ctx.step("price", async () => item.length);
    this.items.push(item);
    return price;
  }
}

@Workflow()
class Failing {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<void> {
    await this.ctx.step("first", async () => 1);
    throw new RangeError("out of range");
  }
}

@Workflow()
class Looping {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<number> {
    const next = await this.ctx.step("count", async () => n + 1);
    if (next < 3) return this.ctx.continueAsNew(next);
    return n;
  }
}

@Workflow()
class Waiting {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<number> {
    const a = await this.ctx.step("a", async () => {
      ran.push("a");
      return n;
    });
    await this.ctx.waitFor("go");
    return a;
  }
}

/** Waits for a signal (with a timeout), then for a condition a signal handler makes true, then sleeps. */
@Workflow()
class Pausing {
  private approved = false;
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<void> {
    await this.ctx.waitFor("go", { timeout: "1h" });
    await this.ctx.condition(() => this.approved);
    await this.ctx.sleep("2h");
  }

  @Signal() approve(ok: boolean): void {
    this.approved = ok;
  }
}

describe("Replayer", () => {
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine | undefined;

  beforeEach(() => {
    tmp = tempDir("replayer");
    ran.length = 0;
  });
  afterEach(async () => {
    await engine?.shutdown();
    engine = undefined;
    tmp.cleanup();
  });

  /** Runs `PayRecorded` to its end and exports its journal to a file. */
  async function recordPay(id: string): Promise<string> {
    engine = await openLocal(join(tmp.dir, "data"), { workflows: [PayRecorded] });
    await (await engine.start(PayRecorded, id, undefined)).result();
    const detail = await engine.describe(id);
    const file = join(tmp.dir, "journals", exportFileName(id));
    writeExport(file, exportJournal(detail!));
    await engine.shutdown();
    engine = undefined;
    ran.length = 0;
    return file;
  }

  describe("replay", () => {
    it("replays a journal clean through the same code, without running its steps", async () => {
      const file = await recordPay("p-1");
      const r = await new Replayer().register(PaySame).replayFile(file);
      expect(r).to.include({ ok: true, finished: true, workflowId: "p-1", type: "pay", runId: 1, file });
      expect(r.error).to.equal(undefined);
      expect(ran).to.deep.equal([]);
    });

    it("reports the first difference, naming the position, what the journal holds and what the code asked for", async () => {
      const file = await recordPay("p-1");
      const r = await new Replayer().register(PayChanged).replayFile(file);
      expect(r.ok).to.equal(false);
      expect(r.finished).to.equal(false);
      expect(r.error).to.contain("'charge'").and.contain("'refund'").and.contain("position 2").and.contain("p-1");
      expect(r.cause).to.be.instanceOf(NonDeterminismError);
    });

    it("treats a step the journal lacks as not finished, and does not run it", async () => {
      const file = await recordPay("p-1");
      const journal = readExport(file);
      const cut: ExportedJournal = { ...journal, status: "running", records: journal.records.slice(0, -1) };
      const r = await new Replayer().register(PayLonger).replay(cut);
      expect(r).to.include({ ok: true, finished: false });
      expect(r.next).to.deep.equal(["step 'ship' (call #3)"]);
      expect(ran).to.deep.equal([]);
    });

    it("fails a journal that finished where the code asks for another step", async () => {
      const file = await recordPay("p-1");
      const r = await new Replayer().register(PayLonger).replayFile(file);
      expect(r.ok).to.equal(false);
      expect(r.error).to.contain("finish (ok)").and.contain("'ship'");
      expect(ran).to.deep.equal([]);
    });

    it("resolves when the workflow is left waiting at the end of its journal", async () => {
      engine = await openLocal(join(tmp.dir, "data"), { workflows: [Waiting] });
      const run = await engine.start(Waiting, "w-1", 7);
      await eventually("the wait", async () => (await run.status()).status === "suspended");
      const journal = exportJournal(await run.describe());
      ran.length = 0;
      const r = await new Replayer().register(Waiting).replay(journal);
      expect(r).to.include({ ok: true, finished: false, records: 2 });
      expect(r.next).to.deep.equal([]);
      expect(r.waiting).to.deep.equal([{ kind: "signal", name: "go" }]);
      expect(ran).to.deep.equal([]);
    });

    it("says what the code waits for at the journal's end: a signal until its timeout, a condition, a timer", async () => {
      engine = await openLocal(join(tmp.dir, "data"), { workflows: [Pausing] });
      const run = await engine.start(Pausing, "pause-1", undefined);
      const replayer = new Replayer().register(Pausing);
      const waitingNow = async (records: number): Promise<ReplayResult["waiting"]> => {
        await eventually(`${records} records, the run waiting`, async () => {
          const d = await run.describe();
          return d.journal.length === records && d.status === "suspended";
        });
        const r = await replayer.replay(await run.describe());
        expect(r.ok, r.error).to.equal(true);
        return r.waiting;
      };

      const atSignal = await waitingNow(2);
      const [timeout] = (await run.describe()).journal.filter((r) => r.kind === "timer");
      expect(atSignal).to.deep.equal([{ kind: "signal", name: "go", until: (timeout as { until: number }).until }]);

      await run.signal("go", 1);
      const atCondition = await waitingNow(3);
      expect(atCondition).to.have.length(1, "the timeout's timer is no longer armed");
      expect(atCondition[0]).to.include({ kind: "condition" });
      expect((atCondition[0] as { predicate: string }).predicate).to.contain("this.approved");

      await run.signal("approve", true);
      const atSleep = await waitingNow(5);
      const sleep = (await run.describe()).journal.at(-1) as { kind: string; seq: number; until: number };
      expect(sleep.kind).to.equal("timer");
      expect(atSleep).to.deep.equal([{ kind: "timer", seq: sleep.seq, until: sleep.until }]);

      await run.terminate("enough");
      const finished = await replayer.replay(await run.describe());
      expect(finished).to.include({ ok: true, finished: true });
      expect(finished.waiting).to.deep.equal([]);
    });

    it("replays a journal holding every kind of record clean, with payload types intact", async () => {
      tokens.length = 0;
      engine = await openLocal(join(tmp.dir, "data"), { workflows: [Everything, Child] });
      const run = await engine.start(Everything, "all-1", { at: new Date(Date.UTC(2024, 0, 2)), price: new Money(41, "EUR") });
      expect(await run.update<number>("add", "apple", { id: "u-1" })).to.equal(5);
      await run.signal("note", "hello");
      await run.signal("approve", true);
      await eventually("the completion token", () => tokens.length === 1);
      await engine.complete(tokens[0]!, "approved");
      expect(await run.result()).to.equal("42 EUR/card declined/hello/approved/40/timeout/apple/2024-01-02T00:00:00.000Z");

      const journal = exportJournal(await run.describe());
      const kinds = new Set(journal.records.map((r) => r.kind));
      for (const kind of [
        "start",
        "step",
        "signal",
        "update",
        "update-result",
        "timer",
        "fired",
        "patch",
        "attributes",
        "heartbeat",
        "completion",
        "child",
        "child-result",
        "finish",
      ]) {
        expect(kinds, `a ${kind} record`).to.include(kind);
      }
      const file = join(tmp.dir, "journals", exportFileName("all-1"));
      writeExport(file, journal);
      const r = await new Replayer().register(Everything, Child).replayFile(file);
      expect(r.error).to.equal(undefined);
      expect(r).to.include({ ok: true, finished: true });
      expect(r.next).to.deep.equal([]);
      expect(tokens).to.have.length(1);

      const quote = readExport(file).records.find((rec) => rec.kind === "step" && rec["name"] === "quote");
      expect(quote?.payload).to.deep.equal({ tagged: { $: "c", n: "Money", v: { cents: 42, currency: "EUR" } } });
    });

    it("replays a failed run clean", async () => {
      engine = await openLocal(join(tmp.dir, "data"), { workflows: [Failing] });
      const run = await engine.start(Failing, "f-1", undefined);
      expect(await run.result().catch((e: unknown) => e)).to.be.instanceOf(RangeError);
      const r = await new Replayer().register(Failing).replay(exportJournal(await run.describe()));
      expect(r).to.include({ ok: true, finished: true });
    });

    it("replays a run's detail straight from describe", async () => {
      engine = await openLocal(join(tmp.dir, "data"), { workflows: [PayRecorded] });
      const run = await engine.start(PayRecorded, "p-9", undefined);
      await run.result();
      ran.length = 0;
      expect(await new Replayer().register(PaySame).replay(await run.describe())).to.include({
        ok: true,
        finished: true,
        workflowId: "p-9",
        records: 4,
      });
      expect(await new Replayer().register(PayChanged).replay(await run.describe())).to.include({ ok: false });
      expect(ran).to.deep.equal([]);
    });

    it("replays a cancelled run and a run that continued as new", async () => {
      engine = await openLocal(join(tmp.dir, "data"), { workflows: [Waiting, Looping] });
      const waiting = await engine.start(Waiting, "w-c", 1);
      await eventually("the wait", async () => (await waiting.status()).status === "suspended");
      await waiting.cancel("no longer needed");
      expect(await waiting.result().catch((e: unknown) => e)).to.be.instanceOf(CancelledError);
      const cancelled = exportJournal(await waiting.describe());
      expect(cancelled.records.map((r) => r.kind)).to.include("cancel");
      expect(await new Replayer().register(Waiting).replay(cancelled)).to.include({ ok: true, finished: true });

      const looping = await engine.start(Looping, "loop", 0);
      expect(await looping.result()).to.equal(2);
      const last = exportJournal(await looping.describe());
      expect(last.runId).to.equal(3);
      expect(last.records[0]).to.deep.include({ kind: "start", from: { runId: 2, reason: "continue-as-new" } });
      expect(await new Replayer().register(Looping).replay(last)).to.include({ ok: true, finished: true });
      const first = {
        ...last,
        runId: 1,
        status: "running" as const,
        records: [{ ...last.records[0]!, runId: 1, from: undefined, payload: { tagged: [0, { $: "u" }] } }],
      };
      const r = await new Replayer().register(Looping).replay(JSON.parse(JSON.stringify(first)) as typeof first);
      expect(r).to.include({ ok: true, finished: false });
      expect(r.next).to.deep.equal(["step 'count' (call #1)"]);
    });

    it("reports a journal whose workflow type is not registered", async () => {
      const file = await recordPay("p-1");
      const r = await new Replayer().register(Waiting).replayFile(file);
      expect(r.ok).to.equal(false);
      expect(r.cause).to.be.instanceOf(NotFoundError);
      expect(r.error).to.contain("'pay'").and.contain("p-1").and.contain("'Waiting'");
    });

    it("resolves workflows from the container it is given", async () => {
      const file = await recordPay("p-1");
      const child = container.createChildContainer();
      const r = await new Replayer({ container: child }).register(PaySame).replayFile(file);
      expect(r.ok).to.equal(true);
    });
  });

  describe("replayDir", () => {
    it("replays every export of a folder in name order, a bad file among them", async () => {
      const file = await recordPay("p-2");
      const dir = join(tmp.dir, "journals");
      engine = await openLocal(join(tmp.dir, "data2"), { workflows: [PayRecorded] });
      await (await engine.start(PayRecorded, "p-1", undefined)).result();
      writeExport(join(dir, exportFileName("p-1")), exportJournal((await engine.describe("p-1"))!));
      writeFileSync(join(dir, "zz-broken.json"), "{ not json");
      writeFileSync(join(dir, "notes.txt"), "not an export");

      const results = await new Replayer().register(PaySame).replayDir(dir);
      expect(results.map((r) => [r.workflowId, r.ok])).to.deep.equal([
        ["p-1", true],
        ["p-2", true],
        ["", false],
      ]);
      expect(results[1]?.file).to.equal(file);
      expect(results[2]?.error).to.contain("zz-broken.json").and.contain("not JSON");
    });
  });

  describe("replayRegressions", () => {
    it("defines one test per export file, which fails with the first difference", async () => {
      const file = await recordPay("p-1");
      const dir = join(tmp.dir, "journals");
      const tests: Array<{ title: string; body: () => Promise<void> }> = [];
      const it: DefineTest = (title, body) => tests.push({ title, body });

      replayRegressions(dir, [PaySame], { it });
      expect(tests.map((t) => t.title)).to.deep.equal([`replays ${exportFileName("p-1")}`]);
      await tests[0]!.body();

      tests.length = 0;
      replayRegressions(dir, [PayChanged], { it });
      const err = await tests[0]!.body().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(NonDeterminismError);
      expect((err as Error).message)
        .to.contain(file)
        .and.contain("'charge'")
        .and.contain("'refund'");
    });

    it("defines a failing test for a folder without exports", async () => {
      const empty = join(tmp.dir, "empty");
      mkdirSync(empty);
      const tests: Array<() => Promise<void>> = [];
      replayRegressions(empty, [PaySame], { it: (_title, body) => tests.push(body) });
      expect(tests).to.have.length(1);
      const err = await tests[0]!().catch((e: unknown) => e);
      expect((err as Error).message).to.contain("holds no exported journals");
    });
  });
});
