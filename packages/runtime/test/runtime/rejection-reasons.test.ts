import { expect } from "chai";
import { RejectedError, type RejectionReason } from "../../src/core/errors.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Query, Update, Workflow } from "../../src/workflow/decorators.js";
import { eventually, localKind, memoryKind, type EngineKind } from "./harness.js";

const tokens: string[] = [];

@Workflow("desk")
class Desk {
  private open = true;
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.condition(() => !this.open);
    return "closed";
  }

  @Query() isOpen(): boolean {
    return this.open;
  }

  @Update({
    validate(note: string) {
      if (note.length > 5) throw new Error("notes are at most 5 characters");
    },
  })
  note(note: string): string {
    return note;
  }

  @Update() close(): void {
    this.open = false;
  }
}

@Workflow("ask")
class Ask {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<unknown> {
    const answer = await this.ctx.awaitCompletion("ask", ({ token }) => void tokens.push(token));
    await this.ctx.waitFor("done");
    return answer;
  }
}

@Workflow({ name: "guarded", patches: ["known"] })
class Guarded {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<boolean> {
    return this.ctx.patched("unknown" as "known");
  }
}

/** The reason of the `RejectedError` that `promise` rejects with; fails the test on anything else. */
async function reasonOf(promise: Promise<unknown>): Promise<RejectionReason> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).to.be.instanceOf(RejectedError);
  expect((error as RejectedError).code).to.equal("FUSEE_REJECTED");
  return (error as RejectedError).reason;
}

describe("RejectedError reasons", () => {
  let kind: EngineKind;
  beforeEach(() => {
    tokens.length = 0;
    kind = memoryKind();
  });

  it("says which refusal it is, for bad arguments, unknown handlers, refused updates and finished runs", async () => {
    const engine = await kind.open({ workflows: [Desk] });
    expect(await reasonOf(engine.start(Desk, "", undefined))).to.equal("invalid-argument");
    const run = await engine.start(Desk, "desk-1", undefined);
    expect(await reasonOf(run.query("nope"))).to.equal("unknown-query");
    expect(await reasonOf(run.update("nope", 1))).to.equal("unknown-update");
    expect(await reasonOf(run.update("note", "far too long"))).to.equal("update-rejected");
    await run.update("close", undefined);
    expect(await run.result()).to.equal("closed");
    expect(await reasonOf(run.signal("late", 1))).to.equal("already-finished");
    expect(await reasonOf(run.update("note", "hi"))).to.equal("already-finished");
    await engine.shutdown();
  });

  it("tells a malformed completion token from one already answered and from one of a finished run", async () => {
    const engine = await kind.open({ workflows: [Ask] });
    const run = await engine.start(Ask, "ask-1", undefined);
    await eventually("the token sent", () => tokens.length === 1);
    expect(await reasonOf(engine.complete("not-a-token", 1))).to.equal("invalid-token");
    await eventually("waiting", async () => (await run.status()).status === "suspended");
    await engine.complete(tokens[0] as string, "yes");
    expect(await reasonOf(engine.complete(tokens[0] as string, "again"))).to.equal("token-used");
    await run.signal("done");
    expect(await run.result()).to.equal("yes");
    expect(await reasonOf(engine.complete(tokens[0] as string, "late"))).to.equal("already-finished");
    await engine.shutdown();
  });

  it("keeps the reason of a rejection that failed a run across a restart", async () => {
    const local = localKind();
    try {
      const first = await local.open({ workflows: [Guarded] });
      expect(await reasonOf((await first.start(Guarded, "guarded-1", undefined)).result())).to.equal("undeclared-patch");
      await first.shutdown();
      const again = await local.reopen({ workflows: [Guarded] });
      expect(await reasonOf(again.run("guarded-1").result()), "read back from the journal").to.equal("undeclared-patch");
      await again.shutdown();
    } finally {
      await local.cleanup();
    }
  });
});
