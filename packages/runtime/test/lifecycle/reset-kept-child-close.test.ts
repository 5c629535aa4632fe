import "reflect-metadata";
import { expect } from "chai";
import { CancelledError } from "../../src/core/errors.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";

/** Takes its first cancellation as a cue to tidy up, then waits on: a second one would show. */
@Workflow("kept-tidy-child")
class TidyChild {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<void> {
    try {
      await this.ctx.waitFor("never");
    } catch (e) {
      if (!(e instanceof CancelledError)) throw e;
      await this.ctx.step("tidy", async () => true);
      await this.ctx.waitFor("never");
    }
  }
}

/** As TidyChild, but continues as new when signalled "renew" before any cancellation. */
@Workflow("kept-renewing-child")
class RenewingChild {
  constructor(private readonly ctx: Ctx<RenewingChild>) {}

  async run(round: number): Promise<void> {
    try {
      await this.ctx.waitFor("renew");
    } catch (e) {
      if (!(e instanceof CancelledError)) throw e;
      await this.ctx.step("tidy", async () => true);
      await this.ctx.waitFor("never");
      return;
    }
    return this.ctx.continueAsNew(round + 1);
  }
}

/** Starts a child it asks to cancel when it ends, then a step to reset to, then waits for "end". */
@Workflow("parent-keeping-child")
class KeepingParent {
  constructor(private readonly ctx: Ctx) {}

  async run(renewing?: boolean): Promise<string> {
    const child = `${this.ctx.workflowId}-child`;
    if (renewing === true) await this.ctx.startChild(RenewingChild, child, 1, { close: "request-cancel" });
    else await this.ctx.startChild(TidyChild, child, undefined, { close: "request-cancel" });
    await this.ctx.step("after", async () => true);
    await this.ctx.waitFor("end");
    return "ended";
  }
}

/** How many times `id` was asked to cancel, and how many times it tidied up. */
async function cancels(engine: TestEngine, id: string): Promise<{ asked: number; tidied: number }> {
  const journal = (await engine.describe(id))?.journal ?? [];
  return {
    asked: journal.filter((r) => r.kind === "cancel").length,
    tidied: journal.filter((r) => r.kind === "step" && r.name === "tidy").length,
  };
}

/** Starts the parent, resets it to the step after its child's start (the new run keeps the child). */
async function startAndReset(engine: TestEngine, id: string, renewing = false): Promise<void> {
  const run = await engine.start(KeepingParent, id, renewing);
  await engine.idle();
  await run.reset("after");
  await engine.idle();
  expect((await run.status()).runId, "the reset made a new run").to.equal(2);
  expect(await cancels(engine, `${id}-child`), "the reset kept the child").to.deep.equal({ asked: 0, tidied: 0 });
}

async function end(engine: TestEngine, id: string): Promise<void> {
  await engine.run(id).signal("end", undefined);
  expect(await engine.run(id).result()).to.equal("ended");
  await engine.idle();
}

// Two parents, so that the parent's shard comes both before and after its child's when the engine opens.
const parents = ["kept-1", "kept-4"];

describe("a child a reset's new run kept, asked to cancel when its parent ends", () => {
  for (const id of parents) {
    it(`is asked once, also after the engine opens again (${id})`, async () => {
      let engine = await TestEngine.create({ workflows: [KeepingParent, TidyChild, RenewingChild], cache: 1 });
      try {
        await startAndReset(engine, id);
        await end(engine, id);
        expect(await cancels(engine, `${id}-child`)).to.deep.equal({ asked: 1, tidied: 1 });
        engine = await engine.restart();
        await engine.idle();
        expect(await cancels(engine, `${id}-child`), "after the restart").to.deep.equal({ asked: 1, tidied: 1 });
      } finally {
        await engine.shutdown();
      }
    });

    it(`is asked once when the engine crashed between the reset and the parent's end (${id})`, async () => {
      let engine = await TestEngine.create({ workflows: [KeepingParent, TidyChild, RenewingChild], cache: 1 });
      try {
        await startAndReset(engine, id);
        engine = await engine.crash();
        await engine.idle();
        expect(await cancels(engine, `${id}-child`), "the crash closed nothing").to.deep.equal({ asked: 0, tidied: 0 });
        await end(engine, id);
        expect(await cancels(engine, `${id}-child`)).to.deep.equal({ asked: 1, tidied: 1 });
      } finally {
        await engine.shutdown();
      }
    });

    for (const seed of [0, 1, 2, 3]) {
      it(`is asked once when the engine crashed as the parent ended, before the close was surely durable (${id}, seed ${seed})`, async () => {
        let engine = await TestEngine.create({ workflows: [KeepingParent, TidyChild, RenewingChild], cache: 1 });
        try {
          await startAndReset(engine, id);
          await engine.run(id).signal("end", undefined);
          await engine.run(id).result();
          engine = await engine.crash(seed);
          await engine.idle();
          if ((await engine.status(id))?.status !== "ok") await end(engine, id);
          expect(await cancels(engine, `${id}-child`)).to.deep.equal({ asked: 1, tidied: 1 });
        } finally {
          await engine.shutdown();
        }
      });
    }
  }
});

describe("a child a reset's new run kept, that continued as new", () => {
  for (const id of parents) {
    it(`is left running when the engine opens again while its parent goes on, and asked once when it ends (${id})`, async () => {
      let engine = await TestEngine.create({ workflows: [KeepingParent, TidyChild, RenewingChild], cache: 1 });
      try {
        await startAndReset(engine, id, true);
        await engine.run(`${id}-child`).signal("renew", undefined);
        await engine.idle();
        expect((await engine.status(`${id}-child`))?.runId, "the child continued as new").to.equal(2);
        engine = await engine.restart();
        await engine.idle();
        expect(await cancels(engine, `${id}-child`), "after the restart").to.deep.equal({ asked: 0, tidied: 0 });
        await end(engine, id);
        expect(await cancels(engine, `${id}-child`), "once the parent ended").to.deep.equal({ asked: 1, tidied: 1 });
      } finally {
        await engine.shutdown();
      }
    });
  }
});
