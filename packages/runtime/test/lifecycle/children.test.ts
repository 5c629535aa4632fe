import { expect } from "chai";
import path from "node:path";
import { encodeRecord } from "../../src/journal/record-codec.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { createPayloadCodec } from "../../src/engine/payloads.js";
import { openLocalLog } from "../../src/storage/index.js";
import { useTempDir } from "../storage/support/temp-dir.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { CancelledError, TerminatedError, TimeoutError, WorkflowFailedError, AlreadyExistsError } from "../../src/core/errors.js";
import { eventually, onEachEngine } from "../runtime/harness.js";

@Workflow("kid")
class Kid {
  constructor(private readonly ctx: Ctx) {}
  async run(mode: string): Promise<string> {
    if (mode === "fail") throw new Error("kid broke");
    if (mode === "wait") await this.ctx.waitFor("never");
    return this.ctx.step("grow", async () => `grown ${this.ctx.workflowId}`);
  }
}

@Workflow("parent")
class Parent {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<void> {
    await this.ctx.startChild("kid", "kid-terminate", "wait");
    await this.ctx.startChild("kid", "kid-cancel", "wait", { close: "request-cancel" });
    await this.ctx.startChild("kid", "kid-abandon", "wait", { close: "abandon" });
    await this.ctx.waitFor("never");
  }
}

@Workflow("waiting-parent")
class WaitingParent {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    try {
      return await this.ctx.executeChild<string>("kid", "kid-awaited", "wait");
    } catch (e) {
      if (!(e instanceof CancelledError)) throw e;
      await this.ctx.step("note", async () => "noted");
      throw e;
    }
  }
}

@Workflow("family")
class Family {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string[]> {
    const out: string[] = [];
    out.push(await this.ctx.executeChild(Kid, "kid-ok", "ok"));
    try {
      await this.ctx.executeChild("kid", "kid-fail", "fail");
    } catch (e) {
      out.push(`${(e as WorkflowFailedError).name}: ${(e as Error).message}`);
    }
    try {
      await this.ctx.executeChild("kid", "kid-slow", "wait", { timeout: "30ms" });
    } catch (e) {
      out.push(e instanceof TimeoutError ? "timed out" : String(e));
    }
    await this.ctx.startChild("kid", "kid-twice", "wait", { close: "abandon" });
    try {
      await this.ctx.startChild("kid", "kid-twice", "ok");
    } catch (e) {
      out.push(e instanceof AlreadyExistsError ? "id taken" : String(e));
    }
    return out;
  }
}

onEachEngine("child workflows", (kind) => {
  it("flows child results, failures and timeouts to the parent durably", async () => {
    const engine = await kind().open({ workflows: [Kid, Family] });
    const run = await engine.start(Family, "family-1", undefined);
    const out = await run.result();
    expect(out[0]).to.equal("grown kid-ok");
    expect(out[1]).to.contain("kid broke");
    expect(out[2]).to.equal("timed out");
    expect(out[3]).to.equal("id taken");
    await eventually("the slow child closed", async () => (await engine.status("kid-slow"))?.status === "terminated");
    const kinds = (await run.describe()).journal.map((r) => r.kind);
    expect(kinds.filter((k) => k === "child")).to.have.length(5);
    expect((await engine.status("kid-twice"))?.status, "abandoned, still waiting").to.be.oneOf(["suspended", "parked"]);
    expect(kinds.filter((k) => k === "child-result")).to.have.length.at.least(2);
    await engine.shutdown();
  });

  it("interrupts a parent waiting for its child when the parent is cancelled, and closes the child", async () => {
    const engine = await kind().open({ workflows: [Kid, WaitingParent] });
    const parent = await engine.start(WaitingParent, "waiting-parent-1", undefined);
    await eventually("the child waits", async () => (await engine.status("kid-awaited"))?.status === "suspended");
    await parent.cancel("order withdrawn");
    expect(await parent.result().catch((e: unknown) => e)).to.be.instanceOf(CancelledError);
    const journal = (await parent.describe()).journal;
    expect(journal.filter((r) => r.kind === "step").map((r) => r.kind === "step" && r.name)).to.deep.equal(["note"]);
    expect((await parent.status()).status).to.equal("cancelled");
    await eventually("the child is terminated", async () => (await engine.status("kid-awaited"))?.status === "terminated");
    await engine.shutdown();
  });

  it("applies each child's close policy when the parent is terminated", async () => {
    const engine = await kind().open({ workflows: [Kid, Parent] });
    const run = await engine.start(Parent, "parent-1", undefined);
    await eventually("children", async () => {
      const s = await Promise.all(["kid-terminate", "kid-cancel", "kid-abandon"].map((id) => engine.status(id)));
      return s.every((x) => x !== undefined);
    });
    await run.terminate("stop");
    expect(await run.result().catch((e: unknown) => e)).to.be.instanceOf(TerminatedError);
    await eventually("children closed", async () => {
      const t = await engine.status("kid-terminate");
      const c = await engine.status("kid-cancel");
      return t?.status === "terminated" && c?.status === "cancelled";
    });
    expect(["suspended", "parked", "running"]).to.include((await engine.status("kid-abandon"))?.status);
    await engine.shutdown();
  });
});

@Workflow("awaits-kid")
class AwaitsKid {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    return `parent got ${await this.ctx.executeChild(Kid, "kid-late", "wait")}`;
  }
}

describe("child workflows across a crash (local engine)", () => {
  const tmp = useTempDir("children-crash");

  it("delivers the result of a child that finished just before a crash to its parent after the restart", async () => {
    const dir = path.join(tmp(), "data");
    const config = Config.local(dir).shards(1);
    let engine = await Engine.open(config, { workflows: [Kid, AwaitsKid] });
    const run = await engine.start(AwaitsKid, "parent-late", undefined);
    await eventually("the parent to hold its child record", async () => (await run.describe()).journal.some((r) => r.kind === "child"));
    await eventually("the child to wait", async () => (await engine.status("kid-late"))?.status === "suspended");
    await engine.shutdown();

    // The child's finish became durable, and the process died before the parent's child-result did.
    const log = await openLocalLog({ dir, shards: 1 });
    const position = (await log.read(0, "kid-late#1")).length;
    const finish = encodeRecord({ kind: "finish", status: "ok", value: "late result", at: Date.now() }, createPayloadCodec(undefined), {
      workflowId: "kid-late",
      runId: 1,
      position,
    });
    await log.append(0, { stream: "kid-late#1", body: finish });
    await log.close();

    engine = await Engine.open(config, { workflows: [Kid, AwaitsKid] });
    try {
      expect(await engine.run("parent-late").result()).to.equal("parent got late result");
      const kinds = (await engine.describe("parent-late"))!.journal.map((r) => r.kind);
      expect(kinds.filter((k) => k === "child-result")).to.have.length(1);
    } finally {
      await engine.shutdown();
    }
  });
});
