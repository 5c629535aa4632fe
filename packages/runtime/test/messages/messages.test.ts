import "reflect-metadata";
import { expect } from "chai";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { AlreadyExistsError, NotFoundError } from "../../src/core/errors.js";
import type { StepRecord } from "../../src/journal/records.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Signal, Workflow } from "../../src/workflow/decorators.js";
import { localKind, tempDir, type EngineKind } from "../runtime/harness.js";
import { hooks, Messenger, Tally } from "./fixtures.js";

const CRASH_WORKER = fileURLToPath(new URL("./crash-worker.js", import.meta.url));

/** Starts a Tally under an ID that may be taken, and reports what the ID policy said. */
@Workflow()
class Starter {
  constructor(private readonly ctx: Ctx) {}

  async run(policy: "fail" | "use-existing"): Promise<string> {
    try {
      await this.ctx.startWorkflow(Tally, "tally-shared", "second", { idPolicy: { running: policy } });
      return "started";
    } catch (e) {
      return e instanceof AlreadyExistsError ? "refused" : `failed: ${(e as Error).message}`;
    }
  }
}

/** Sends to runs that do not exist, and cancels one that does. */
@Workflow()
class Stray {
  constructor(private readonly ctx: Ctx) {}

  async run(victim: string): Promise<string[]> {
    const out: string[] = [];
    try {
      await this.ctx.signalWorkflow("nobody", "add", 1);
    } catch (e) {
      out.push(e instanceof NotFoundError ? "no such run" : String(e));
    }
    try {
      await this.ctx.updateWorkflow(victim, "total", -1);
    } catch (e) {
      out.push(`refused: ${(e as Error).message}`);
    }
    await this.ctx.cancelWorkflow(victim, "not needed");
    out.push("cancelled");
    return out;
  }
}

/** Signals a run that exists already. */
@Workflow()
class Pinger {
  constructor(private readonly ctx: Ctx) {}

  async run(target: string): Promise<string> {
    await this.ctx.signalWorkflow(target, "add", 7);
    await this.ctx.signalWorkflow(target, "close");
    return "sent";
  }
}

/** Waits for a signal; started by signalWithStart. */
@Workflow()
class Inbox {
  private got: string[] = [];
  constructor(private readonly ctx: Ctx) {}

  async run(owner: string): Promise<string> {
    await this.ctx.condition(() => this.got.length >= 2);
    return `${owner}: ${this.got.join(" ")}`;
  }

  @Signal() post(text: string): void {
    this.got.push(text);
  }
}

function messageSteps(journal: readonly { kind: string }[]): string[] {
  return journal.filter((r): r is StepRecord => r.kind === "step").map((r) => r.name);
}

describe("messages between workflows", () => {
  describe("on the test engine", () => {
    it("should start, signal and update another workflow from workflow code, each journaled in the sender", async () => {
      const engine = await TestEngine.create({ workflows: [Messenger, Tally] });
      const sender = await engine.start(Messenger, "messenger-1", "tally-1");
      expect(await sender.result()).to.equal(30);
      expect(await engine.run("tally-1").result()).to.equal("tally: 1,2");
      expect(messageSteps((await sender.describe()).journal)).to.deep.equal([
        "ctx.startWorkflow",
        "ctx.signalWorkflow",
        "ctx.signalWorkflow",
        "ctx.updateWorkflow",
        "ctx.signalWorkflow",
      ]);
      const tally = (await engine.describe("tally-1"))!.journal;
      expect(tally.filter((r) => r.kind === "signal").map((r) => (r as { name: string }).name)).to.deep.equal(["add", "add", "close"]);
      await engine.shutdown();
    });

    it("should start an independent run that outlives its starter, honouring the ID policy", async () => {
      const engine = await TestEngine.create({ workflows: [Starter, Tally] });
      await engine.start(Tally, "tally-shared", "first");
      expect(await (await engine.start(Starter, "starter-1", "fail")).result()).to.equal("refused");
      expect(await (await engine.start(Starter, "starter-2", "use-existing")).result()).to.equal("started");
      await engine.run("tally-shared").signal("close");
      expect(await engine.run("tally-shared").result()).to.equal("first: ");
      expect(await (await engine.start(Starter, "starter-3", "fail")).result()).to.equal("started");
      expect((await engine.status("tally-shared"))!.status).to.equal("suspended");
      await engine.shutdown();
    });

    it("should hand the sender the target's refusals, and cancel another run", async () => {
      const engine = await TestEngine.create({ workflows: [Stray, Tally] });
      const victim = await engine.start(Tally, "victim", "v");
      expect(await (await engine.start(Stray, "stray-1", "victim")).result()).to.deep.equal([
        "no such run",
        "refused: update 'total' of Tally (ID victim) was rejected: scale must be positive",
        "cancelled",
      ]);
      expect((await victim.status()).status).to.equal("cancelled");
      await engine.shutdown();
    });

    it("should start a run with a signal, or signal the running one, with engine.signalWithStart", async () => {
      const engine = await TestEngine.create({ workflows: [Inbox] });
      const run = await engine.signalWithStart(Inbox, "inbox-1", "ann", "post", "hello");
      const journal = (await run.describe()).journal;
      expect(journal.map((r) => r.kind)).to.deep.equal(["start"]);
      await engine.signalWithStart(Inbox, "inbox-1", "someone else", "post", "again");
      expect(await run.result()).to.equal("ann: hello again");
      await engine.shutdown();
    });
  });

  describe("across restarts", () => {
    let kind: EngineKind;
    beforeEach(() => {
      kind = localKind();
    });
    afterEach(() => {
      hooks.onAdd = undefined;
      return kind.cleanup();
    });

    it("should refuse a message to a run its engine cannot run, naming why, and deliver one sent once it can", async () => {
      let engine = await kind.open({ workflows: [Tally] });
      await engine.start(Tally, "tally-2", "late");
      await engine.shutdown();
      // This engine cannot run Tally (not registered): the run cannot go on here, and says so.
      engine = await kind.reopen({ workflows: [Pinger] });
      const refused = await (await engine.start(Pinger, "pinger-1", "tally-2")).result().catch((e: unknown) => e);
      expect(refused).to.be.instanceOf(NotFoundError);
      expect((refused as Error).message)
        .to.contain("'Tally'")
        .and.contain("not registered");
      expect((await engine.status("tally-2"))?.status).to.equal("stopped");
      expect((await engine.describe("tally-2"))!.journal.filter((r) => r.kind === "signal")).to.have.length(0);
      await engine.shutdown();
      engine = await kind.reopen({ workflows: [Pinger, Tally] });
      expect(await (await engine.start(Pinger, "pinger-2", "tally-2")).result()).to.equal("sent");
      expect(await engine.run("tally-2").result()).to.equal("late: 7");
      expect((await engine.describe("tally-2"))!.journal.filter((r) => r.kind === "signal")).to.have.length(2);
      await engine.shutdown();
    });

    it("should apply a message once when the sender dies after the target got it and before it journaled sending it", async () => {
      const dir = tempDir("messages-crash");
      const child = spawn(process.execPath, [CRASH_WORKER, dir], { stdio: "ignore" });
      const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on("close", (_code, s) => resolve(s)));
      expect(signal).to.equal("SIGKILL");
      const killedAt = Date.now();
      const engine = await Engine.open(Config.local(dir).shards(4), { workflows: [Messenger, Tally] });
      try {
        expect(await engine.run("messenger-1").result()).to.equal(30);
        expect(await engine.run("tally-1").result()).to.equal("tally: 1,2");
        const sender = (await engine.describe("messenger-1"))!.journal.filter((r): r is StepRecord => r.kind === "step");
        // The first signal's step was journaled only after the restart: the message was sent twice and applied once.
        expect(sender[1]!.name).to.equal("ctx.signalWorkflow");
        expect(sender[1]!.at).to.be.at.least(killedAt);
        const adds = (await engine.describe("tally-1"))!.journal.filter((r) => r.kind === "signal" && r.name === "add");
        expect(adds).to.have.length(2);
      } finally {
        await engine.shutdown();
      }
    });
  });
});
