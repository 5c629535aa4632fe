import "reflect-metadata";
import { expect } from "chai";
import { NonDeterminismError } from "../../src/core/errors.js";
import type { EngineEvent } from "../../src/engine/engine-events.js";
import { Replayer } from "../../src/replay/replayer.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Step, Workflow } from "../../src/workflow/decorators.js";
import { openLocal, tempDir } from "./helpers.js";

/** What the "v2" classes below do differently, switched by the tests between recording and replay. */
const change = { swapped: false, throws: false };

@Workflow("ship")
class Ship {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<string> {
    const first = await this.label(change.swapped ? n + 1 : n);
    const second = await this.label(change.swapped ? n : n + 1);
    await this.ctx.waitFor("go");
    if (change.throws) throw new RangeError("no carrier for this parcel");
    const third = await this.label(n + 2);
    return [first, second, third].join(",");
  }

  @Step() async label(k: number): Promise<string> {
    return `label-${k}`;
  }
}

class Tariff {
  constructor(public cents = 0) {}
  doubled(): number {
    return this.cents * 2;
  }
}

@Workflow("priced")
class Priced {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    const price = await this.quote();
    await this.ctx.waitFor("go");
    return price.doubled();
  }

  // Returns a plain object, as code written before the class existed did; `type` makes it a Tariff.
  @Step({ type: Tariff }) async quote(): Promise<Tariff> {
    return { cents: 21 } as Tariff;
  }
}

describe("replay fidelity", () => {
  let engine: TestEngine;

  beforeEach(async () => {
    change.swapped = false;
    change.throws = false;
    engine = await TestEngine.create({ workflows: [Ship, Priced] });
  });

  afterEach(() => engine.shutdown());

  async function recordShip(id: string, finish: boolean): Promise<Awaited<ReturnType<TestEngine["describe"]>>> {
    const run = await engine.start(Ship, id, 1);
    await engine.idle();
    if (finish) {
      await run.signal("go", 1);
      expect(await run.result()).to.equal("label-1,label-2,label-3");
    }
    return run.describe();
  }

  describe("Replayer", () => {
    it("fails a finished journal when the code now throws before its end, reporting the error", async () => {
      const detail = await recordShip("s-1", true);
      change.throws = true;
      const r = await new Replayer().register(Ship).replay(detail!);
      expect(r.ok).to.equal(false);
      expect(r.finished).to.equal(false);
      expect(r.cause).to.be.instanceOf(NonDeterminismError);
      expect(r.error).to.contain("has thrown RangeError: no carrier for this parcel").and.not.to.contain("is now waiting");
    });

    it("fails a finished journal when the code now ends another way than the run did", async () => {
      @Workflow("ship")
      class ShipFailsAtEnd {
        constructor(private readonly ctx: Ctx) {}
        async run(n: number): Promise<string> {
          await this.label(n);
          await this.label(n + 1);
          await this.ctx.waitFor("go");
          await this.label(n + 2);
          throw new Error("refused at the end");
        }
        @Step() async label(k: number): Promise<string> {
          return `label-${k}`;
        }
      }
      const detail = await recordShip("s-2", true);
      const r = await new Replayer().register(ShipFailsAtEnd).replay(detail!);
      expect(r).to.include({ ok: false, finished: false });
      expect(r.error).to.contain("finish (ok)").and.contain("has thrown Error: refused at the end");
    });

    it("fails a journal whose two calls of one step were swapped, naming the step", async () => {
      const detail = await recordShip("s-3", true);
      change.swapped = true;
      const r = await new Replayer().register(Ship).replay(detail!);
      expect(r.ok).to.equal(false);
      expect(r.cause).to.be.instanceOf(NonDeterminismError);
      expect(r.error).to.contain("step 'label' (call #1) with other arguments").and.contain("s-3");
    });

    it("still replays a journal of the same code clean", async () => {
      const detail = await recordShip("s-4", true);
      expect(await new Replayer().register(Ship).replay(detail!)).to.include({ ok: true, finished: true });
    });
  });

  describe("a live run", () => {
    it("records a fingerprint of a step call's arguments with its result", async () => {
      const detail = await recordShip("s-5", false);
      const steps = detail!.journal.filter((r) => r.kind === "step");
      expect(steps.map((s) => s.args)).to.have.length(2);
      expect(steps[0]?.args).to.match(/^[0-9a-f]{8}$/);
      expect(steps[0]?.args).not.to.equal(steps[1]?.args);
    });

    it("stops a run whose replayed step call has other arguments than recorded, and resumes it once the code is fixed", async () => {
      const tmp = tempDir("fingerprint");
      const events: EngineEvent[] = [];
      try {
        const first = await openLocal(tmp.dir, { workflows: [Ship] });
        await first.start(Ship, "s-6", 1);
        await first.idle();
        await first.shutdown();
        change.swapped = true;
        const second = await openLocal(tmp.dir, { workflows: [Ship], onEvent: (e) => events.push(e) });
        await second
          .run("s-6")
          .signal("go", 1)
          .catch(() => undefined);
        await second.idle();
        expect((await second.status("s-6"))?.status).to.not.equal("ok");
        await second.shutdown();
        change.swapped = false;
        const third = await openLocal(tmp.dir, { workflows: [Ship] });
        await third
          .run("s-6")
          .signal("go", 1)
          .catch(() => undefined);
        expect(await third.run("s-6").result()).to.equal("label-1,label-2,label-3");
        await third.shutdown();
      } finally {
        tmp.cleanup();
      }
      const stopped = events.filter((e) => e.kind === "run-stopped");
      expect(stopped).to.have.length(1);
      expect(stopped[0]).to.include({ reason: "non-determinism", workflowId: "s-6", workflowType: "ship", runId: 1 });
      expect(stopped[0]?.kind === "run-stopped" && stopped[0].error.message).to.contain("step 'label' (call #1) with other arguments");
    });
  });

  describe("@Step({ type })", () => {
    it("rebuilds the class on replay, also from a value recorded as a plain object", async () => {
      await engine.start(Priced, "p-1", undefined);
      await engine.idle();
      engine = await engine.restart();
      await engine.run("p-1").signal("go", 1);
      expect(await engine.run("p-1").result()).to.equal(42);
    });
  });
});
