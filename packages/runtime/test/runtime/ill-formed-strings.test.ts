import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Query, Signal, Update, Workflow } from "../../src/workflow/decorators.js";
import { registerSignal, registerWorkflow } from "../../src/workflow/registry.js";
import { Batch, Debounce } from "../../src/engine/flow-rules.js";
import { ConfigError, RejectedError } from "../../src/core/errors.js";
import { eventually, localKind, type EngineKind } from "./harness.js";

// "\uD83D" alone is the first half of an emoji: it has no UTF-8 form, and Node would write it as U+FFFD.
const LONE = "\uD83D";
const WHOLE = "\uD83D\uDE00";

@Workflow()
class Inbox {
  private seen: string[] = [];
  constructor(private readonly ctx: Ctx) {}

  async run(mode: string): Promise<string> {
    if (mode === "inline step") return this.ctx.step(`send${LONE}`, async () => "sent");
    if (mode === "wait") return String(await this.ctx.waitFor(`note${LONE}`, { timeout: 1 }));
    if (mode === "patch") return String(this.ctx.patched(`fix${LONE}`));
    if (mode === "attributes") {
      this.ctx.setAttributes({ [`tag${LONE}`]: 1 });
      return "set";
    }
    if (mode === "child") return String(await this.ctx.executeChild(Inbox, `child${LONE}`, "done"));
    await this.ctx.condition(() => this.seen.length > 0);
    return this.seen.join(",");
  }

  @Signal() note(text: string): void {
    this.seen.push(text);
  }

  @Query() notes(): string[] {
    return this.seen;
  }

  @Update() async add(text: string): Promise<number> {
    this.seen.push(text);
    return this.seen.length;
  }
}

async function rejection(p: Promise<unknown> | (() => unknown)): Promise<Error> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a rejection");
}

describe("strings that are not well-formed UTF-16", () => {
  let kind: EngineKind;
  beforeEach(() => {
    kind = localKind();
  });
  afterEach(() => kind.cleanup());

  it("refuses workflow IDs with a lone surrogate, keeping two look-alike IDs apart across a restart", async () => {
    let engine = await kind.open({ workflows: [Inbox] });
    const err = await rejection(engine.start(Inbox, `order-${LONE}`, "wait for a note"));
    expect(err).to.be.instanceOf(RejectedError);
    expect(err.message).to.contain("workflow ID").and.contain("lone surrogate").and.contain("U+D83D at index 6");
    expect(await rejection(engine.start(Inbox, `order-\uDE00`, "x"))).to.be.instanceOf(RejectedError);
    await engine.start(Inbox, `order-${WHOLE}`, "wait for a note");
    await engine.start(Inbox, "order-\uFFFD", "wait for a note");
    await eventually("both runs wait", async () => (await engine.list(10)).every((r) => r.status === "suspended"));
    await engine.shutdown();

    engine = await kind.reopen({ workflows: [Inbox] });
    expect((await engine.list(10)).map((r) => r.id).sort()).to.deep.equal([`order-${WHOLE}`, "order-\uFFFD"].sort());
    await engine.run(`order-${WHOLE}`).signal("note", "a");
    await engine.run("order-\uFFFD").signal("note", "b");
    expect(await engine.run(`order-${WHOLE}`).result()).to.equal("a");
    expect(await engine.run("order-\uFFFD").result()).to.equal("b");
    await engine.shutdown();
  });

  it("refuses ill-formed names and IDs wherever they reach the engine, recording nothing", async () => {
    const engine = await kind.open({ workflows: [Inbox] });
    const run = await engine.start(Inbox, "inbox-1", "wait for a note");
    const refused = [
      await rejection(run.signal(`note${LONE}`, "x")),
      await rejection(run.query(`notes${LONE}`)),
      await rejection(run.update(`add${LONE}`, "x")),
      await rejection(run.update("add", "x", { id: `u-${LONE}` })),
      await rejection(engine.updateWithStart(Inbox, "inbox-2", "w", `add${LONE}`, "x")),
      await rejection(engine.schedule(`nightly${LONE}`, { workflow: Inbox, every: "1h", overlap: "skip" })),
      await rejection(engine.debounce(Inbox, `key${LONE}`, "x", Debounce.of("1s"))),
      await rejection(engine.batch(Inbox, "key", "x", Batch.of(2, "1s"), { eventId: `e-${LONE}` })),
    ];
    for (const err of refused) {
      expect(err, err.message).to.be.instanceOf(RejectedError);
      expect(err.message).to.contain("lone surrogate");
    }
    const limit = await rejection(() => engine.limit(`stripe${LONE}`, { concurrent: 1 }));
    expect(limit).to.be.instanceOf(ConfigError);
    expect((await engine.describe("inbox-1"))!.journal.map((r) => r.kind)).to.deep.equal(["start"]);
    expect(await engine.status("inbox-2")).to.equal(undefined);
    await engine.shutdown();
  });

  it("fails workflow code that passes an ill-formed name to ctx, naming it", async () => {
    const engine = await kind.open({ workflows: [Inbox] });
    for (const [mode, what] of [
      ["inline step", "step name"],
      ["wait", "signal name"],
      ["patch", "patch ID"],
      ["attributes", "attribute name"],
      ["child", "child workflow ID"],
    ] as const) {
      const err = await rejection((await engine.start(Inbox, `ctx-${mode.replace(" ", "-")}`, mode)).result());
      expect(err.message, mode).to.contain(what).and.contain("lone surrogate");
    }
    await engine.shutdown();
  });

  it("refuses ill-formed names in decorators and their register twins", () => {
    class Named {
      async run(): Promise<void> {}
      ping(): void {}
    }
    expect(() => registerWorkflow(Named, { name: `Named${LONE}` })).to.throw(ConfigError, "lone surrogate");
    expect(() => registerSignal(Named, "ping", { name: `ping${LONE}` })).to.throw(ConfigError, "lone surrogate");
  });
});
