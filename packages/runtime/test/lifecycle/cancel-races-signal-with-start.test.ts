import "reflect-metadata";
import { expect } from "chai";
import { CancelledError } from "../../src/core/errors.js";
import type { Engine } from "../../src/engine/engine.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { localKind, type EngineKind } from "../runtime/harness.js";
import { Stubborn } from "./support/workflows.js";

/** Returns the signal it waits for, with a timeout; does not catch a cancellation. */
@Workflow()
class Mailbox {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<unknown> {
    return this.ctx.waitFor("a", { timeout: "50ms" });
  }
}

/** Starts `id` with signal `a` and cancels it at once, as two clients racing would. */
async function raceStartAndCancel(engine: Engine, id: string): Promise<void> {
  await Promise.all([engine.signalWithStart(Mailbox, id, undefined, "a", 7), engine.run(id).cancel("gone")]);
}

/** The kinds of the run's journal, and its status. */
async function ending(engine: Engine, id: string): Promise<{ status: string | undefined; kinds: string[] }> {
  const detail = await engine.describe(id);
  return { status: (await engine.status(id))?.status, kinds: (detail?.journal ?? []).map((r) => r.kind) };
}

/** A journal holding a cancel the code was never told of, before the finish, must not end ok. */
function expectCancelled(seen: { status: string | undefined; kinds: string[] }): void {
  expect(seen.kinds).to.include("cancel");
  expect(seen.kinds[seen.kinds.length - 1]).to.equal("finish");
  expect(seen.status).to.equal("cancelled");
}

describe("a cancellation racing signalWithStart", () => {
  it("ends the run cancelled when the cancel is journaled before the code's end (TestEngine)", async () => {
    let engine = await TestEngine.create({ workflows: [Mailbox] });
    await raceStartAndCancel(engine, "m-1");
    await engine.idle();
    const err = await engine
      .run("m-1")
      .result()
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CancelledError);
    const seen = await ending(engine, "m-1");
    expectCancelled(seen);
    engine = await engine.restart();
    expect(await ending(engine, "m-1")).to.deep.equal(seen);
    await engine.shutdown();
  });

  it("keeps the ok end of code that caught a cancellation when a second one is journaled before its finish", async () => {
    const engine = await TestEngine.create({ workflows: [Stubborn] });
    const run = await engine.start(Stubborn, "s-1", undefined);
    await engine.idle();
    await Promise.all([run.cancel("first"), run.cancel("again")]);
    expect(await run.result()).to.equal("ignored the cancellation");
    const seen = await ending(engine, "s-1");
    expect(seen.kinds.filter((k) => k === "cancel")).to.have.length(2);
    expect(seen.status).to.equal("ok");
    await engine.shutdown();
  });

  describe("on the local engine", () => {
    let kind: EngineKind;
    beforeEach(() => {
      kind = localKind();
    });
    afterEach(() => kind.cleanup());

    it("ends the run cancelled, and so does a reopened engine", async () => {
      let engine = await kind.open({ workflows: [Mailbox] });
      await raceStartAndCancel(engine, "m-2");
      const err = await engine
        .run("m-2")
        .result()
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(CancelledError);
      const seen = await ending(engine, "m-2");
      expectCancelled(seen);
      await engine.shutdown();
      engine = await kind.reopen({ workflows: [Mailbox] });
      expect(await ending(engine, "m-2")).to.deep.equal(seen);
      await engine.shutdown();
    });
  });
});
