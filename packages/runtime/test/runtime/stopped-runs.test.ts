import { expect } from "chai";
import { aesGcm } from "../../src/codec/aes-gcm.js";
import { CodecError, NonDeterminismError } from "../../src/core/errors.js";
import type { EngineEvent } from "../../src/engine/engine-events.js";
import { DataDirReader } from "../../src/replay/data-dir-reader.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Query, Signal, Update, Workflow } from "../../src/workflow/decorators.js";
import { eventually, localKind, type EngineKind } from "./harness.js";

let changed = false;

/** Two steps and a wait; `changed` renames its first step, as a deploy that breaks replay would. */
@Workflow("stopped-flow")
class Flow {
  private go = false;
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.step(changed ? "quote-v2" : "quote", async () => 1);
    await this.ctx.condition(() => this.go);
    return "done";
  }

  @Signal() proceed(): void {
    this.go = true;
  }

  @Query() state(): boolean {
    return this.go;
  }

  @Update() async poke(n: number): Promise<number> {
    return n;
  }
}

const k1 = Buffer.alloc(32, 1);
const k2 = Buffer.alloc(32, 2);
const waiting = ["suspended", "parked"];

/** Every call on the run must fail at once with `reason`'s class; terminate still ends it. */
async function refusesEveryCall(
  engine: Awaited<ReturnType<EngineKind["open"]>>,
  id: string,
  reason: new (...a: never[]) => Error,
): Promise<void> {
  const run = engine.run(id);
  const fails = async (what: string, call: () => Promise<unknown>): Promise<void> => {
    const started = Date.now();
    const outcome = await call().then(
      () => "answered",
      (e: unknown) => e,
    );
    expect(outcome, `${what} on a stopped run`).to.be.instanceOf(reason);
    expect(Date.now() - started, `${what} fails at once`).to.be.below(2_000);
  };
  await fails("result()", () => run.result());
  await fails("query()", () => run.query("state"));
  await fails("update()", () => run.update("poke", 1));
  await fails("signal()", () => run.signal("proceed"));
  await fails("cancel()", () => run.cancel());
}

describe("runs that cannot go on (local)", () => {
  let local: EngineKind;
  beforeEach(() => {
    local = localKind();
    changed = false;
  });
  afterEach(async () => {
    changed = false;
    await local.cleanup();
  });

  it("are stopped, with why, when their code no longer matches their journal; every call fails at once, readers see it, and a fix resumes them", async () => {
    const first = await local.open({ workflows: [Flow] });
    await first.start(Flow, "flow-1");
    await eventually("the wait", async () => waiting.includes((await first.status("flow-1"))?.status ?? ""));
    await first.shutdown();

    changed = true;
    const events: EngineEvent[] = [];
    const engine = await local.reopen({ workflows: [Flow], onEvent: (e) => events.push(e) });
    await eventually("the stop", async () => (await engine.status("flow-1"))?.status === "stopped");
    expect((await engine.status("flow-1"))?.error)
      .to.contain("'quote'")
      .and.contain("'quote-v2'");
    expect((await engine.listWhere({ status: "stopped" }, 10)).map((s) => s.id)).to.deep.equal(["flow-1"]);
    expect(events.some((e) => e.kind === "run-stopped" && e.reason === "non-determinism" && e.workflowId === "flow-1")).to.equal(true);
    await refusesEveryCall(engine, "flow-1", NonDeterminismError);

    // The engine says "stopped" from memory at once; its record of the stop is durable once it is idle.
    await engine.idle();
    const reader = await DataDirReader.open(local.dir as string);
    const seen = reader.list({}, 10).find((r) => r.id === "flow-1");
    expect(seen?.status, "the reader sees the run stopped").to.equal("stopped");
    expect(seen?.error).to.contain("'quote-v2'");
    expect(reader.list({ status: "stopped" }, 10).map((r) => r.id)).to.deep.equal(["flow-1"]);
    await reader.close();
    await engine.shutdown();

    changed = false;
    const fixed = await local.reopen({ workflows: [Flow] });
    await eventually("the run going on", async () => waiting.includes((await fixed.status("flow-1"))?.status ?? ""));
    await fixed.run("flow-1").signal("proceed");
    expect(await fixed.run("flow-1").result()).to.equal("done");
    const kinds = (await fixed.describe("flow-1"))!.journal.map((r) => r.kind);
    expect(
      kinds.filter((k) => k === "stopped"),
      "the stop is journaled once",
    ).to.have.length(1);
    expect(kinds).to.include("resumed");
    await fixed.shutdown();
  });

  it("lets a stopped run be terminated", async () => {
    const first = await local.open({ workflows: [Flow] });
    await first.start(Flow, "flow-2");
    await eventually("the wait", async () => waiting.includes((await first.status("flow-2"))?.status ?? ""));
    await first.shutdown();
    changed = true;
    const engine = await local.reopen({ workflows: [Flow] });
    await eventually("the stop", async () => (await engine.status("flow-2"))?.status === "stopped");
    await engine.run("flow-2").terminate("backing out of a bad deploy");
    expect((await engine.status("flow-2"))?.status).to.equal("terminated");
    await engine.shutdown();
  });

  it("lets a stopped run be reset to a step before the change, after which it runs the new code", async () => {
    const first = await local.open({ workflows: [Flow] });
    await first.start(Flow, "flow-3");
    await eventually("the wait", async () => waiting.includes((await first.status("flow-3"))?.status ?? ""));
    await first.shutdown();
    changed = true;
    const engine = await local.reopen({ workflows: [Flow] });
    await eventually("the stop", async () => (await engine.status("flow-3"))?.status === "stopped");
    await engine.run("flow-3").reset("quote");
    await eventually("the new run waiting", async () => waiting.includes((await engine.status("flow-3"))?.status ?? ""));
    await engine.run("flow-3").signal("proceed");
    expect(await engine.run("flow-3").result()).to.equal("done");
    const steps = (await engine.describe("flow-3"))!.journal.filter((r) => r.kind === "step").map((r) => (r as { name?: string }).name);
    expect(steps).to.include("quote-v2").and.not.to.include("quote");
    await engine.shutdown();
  });

  it("are stopped, naming the key, when a key their journal was sealed with is no longer given", async () => {
    const first = await local.open({ workflows: [Flow] }, (c) => c.codec(aesGcm({ k1 })));
    await first.start(Flow, "sealed-1");
    await eventually("the wait", async () => waiting.includes((await first.status("sealed-1"))?.status ?? ""));
    await first.shutdown();
    // A rotation to k2 that dropped k1 too soon.
    const rotated = await local.reopen({ workflows: [Flow] }, (c) => c.codec(aesGcm({ k2, k1 })));
    await rotated.shutdown();
    const events: EngineEvent[] = [];
    const engine = await local.reopen({ workflows: [Flow], onEvent: (e) => events.push(e) }, (c) => c.codec(aesGcm({ k2 })));
    await eventually("the stop", async () => (await engine.status("sealed-1"))?.status === "stopped");
    expect((await engine.status("sealed-1"))?.error).to.contain('"k1"');
    expect(events.some((e) => e.kind === "run-stopped" && e.reason === "key-missing")).to.equal(true);
    await refusesEveryCall(engine, "sealed-1", CodecError);
    await engine.shutdown();

    const restored = await local.reopen({ workflows: [Flow] }, (c) => c.codec(aesGcm({ k2, k1 })));
    await eventually("the run going on", async () => waiting.includes((await restored.status("sealed-1"))?.status ?? ""));
    await restored.run("sealed-1").signal("proceed");
    expect(await restored.run("sealed-1").result()).to.equal("done");
    await restored.shutdown();
  });
});
