import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { CancelledError, RejectedError, TerminatedError } from "../../src/core/errors.js";
import { eventually, localKind, onEachEngine, sleep, type EngineKind } from "../runtime/harness.js";

/** What step bodies saw, in order. */
const seen: string[] = [];
/** Step bodies waiting to be let go by the test. */
let letGo: Array<() => void> = [];
const held = (): Promise<void> => new Promise((resolve) => letGo.push(resolve));
const releaseAll = (): void => {
  for (const go of letGo.splice(0)) go();
};

/** Waits until the signal aborts, then rejects with its reason: a step that honours its signal. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

@Workflow()
class Transfer {
  constructor(private readonly ctx: Ctx) {}

  async run(mode: "honours" | "ignores" | "then-another" | "heartbeats" | "compensates"): Promise<string> {
    if (mode === "compensates") {
      try {
        await this.ctx.step("debit", async () => untilAborted(this.ctx.abortSignal));
        return "debited";
      } catch (e) {
        if (!(e instanceof CancelledError)) throw e;
        return this.ctx.step("refund", async () => {
          seen.push("refund");
          return "refunded after cancel";
        });
      }
    }
    const moved = await this.ctx.step(
      "debit",
      async () => {
        seen.push("debit started");
        if (mode === "honours") return untilAborted(this.ctx.abortSignal);
        if (mode === "heartbeats") {
          for (;;) {
            try {
              this.ctx.heartbeat(seen.length);
            } catch (e) {
              seen.push(`heartbeat threw ${(e as Error).name}`);
              throw e;
            }
            await sleep(5);
          }
        }
        const signal = this.ctx.abortSignal;
        signal.addEventListener("abort", () => seen.push(`abort seen: ${(signal.reason as Error).name}`), { once: true });
        await held();
        seen.push(`debit finished, aborted: ${signal.aborted}`);
        return "moved";
      },
      { retry: RetryPolicy.exponential(3, "1ms", "1ms") },
    );
    if (mode === "then-another") {
      await this.ctx.step("credit", async () => {
        seen.push("credit ran");
        return true;
      });
    }
    return moved;
  }
}

@Workflow()
class Gated {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    return this.ctx.step(
      "print",
      async () => {
        seen.push(`print ${this.ctx.workflowId}`);
        await held();
        return "printed";
      },
      { limit: "printer" },
    );
  }
}

onEachEngine("a cancel or terminate that meets a running step", (kind) => {
  beforeEach(() => {
    seen.length = 0;
    letGo = [];
  });
  afterEach(releaseAll);

  async function runningStep(
    engine: Awaited<ReturnType<ReturnType<typeof kind>["open"]>>,
    id: string,
    mode: Parameters<Transfer["run"]>[0],
  ) {
    const run = await engine.start(Transfer, id, mode);
    await eventually("the step runs", () => seen.includes("debit started"));
    return run;
  }

  it("aborts the step's signal with a CancelledError and ends the run cancelled", async () => {
    const engine = await kind().open({ workflows: [Transfer] });
    const run = await runningStep(engine, "t-1", "honours");
    await run.cancel("customer changed their mind");
    const err = await run.result().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CancelledError);
    expect((err as Error).message).to.contain("debit");
    const detail = await run.describe();
    expect(detail.status).to.equal("cancelled");
    expect(detail.journal.map((r) => r.kind)).to.deep.equal(["start", "cancel", "step", "finish"]);
    expect(seen, "no retry after the cancel").to.deep.equal(["debit started"]);
    await engine.shutdown();
  });

  it("ends the run cancelled, not ok, when the step ignores its signal and the workflow has no later wait", async () => {
    const engine = await kind().open({ workflows: [Transfer] });
    const run = await runningStep(engine, "t-2", "ignores");
    await run.cancel("too late");
    await eventually("the step's signal aborts", () => seen.includes("abort seen: CancelledError"));
    releaseAll();
    expect(await run.result().catch((e: unknown) => e)).to.be.instanceOf(CancelledError);
    const detail = await run.describe();
    expect(detail.status).to.equal("cancelled");
    expect(detail.journal.map((r) => r.kind)).to.deep.equal(["start", "cancel", "step", "finish"]);
    const step = detail.journal[2];
    expect(step?.kind === "step" && step.ok && step.value, "the step's own result is journaled").to.equal("moved");
    expect(seen).to.deep.equal(["debit started", "abort seen: CancelledError", "debit finished, aborted: true"]);
    await engine.shutdown();
  });

  it("does not start a step the workflow calls after the cancellation", async () => {
    const engine = await kind().open({ workflows: [Transfer] });
    const run = await runningStep(engine, "t-3", "then-another");
    await run.cancel("stop");
    await eventually("the step's signal aborts", () => seen.includes("abort seen: CancelledError"));
    releaseAll();
    expect(await run.result().catch((e: unknown) => e)).to.be.instanceOf(CancelledError);
    expect(seen).to.not.include("credit ran");
    expect((await run.status()).status).to.equal("cancelled");
    await engine.shutdown();
  });

  it("makes ctx.heartbeat() throw CancelledError once the run is cancelled", async () => {
    const engine = await kind().open({ workflows: [Transfer] });
    const run = await runningStep(engine, "t-4", "heartbeats");
    await run.cancel("stop");
    expect(await run.result().catch((e: unknown) => e)).to.be.instanceOf(CancelledError);
    expect(seen.at(-1)).to.equal("heartbeat threw CancelledError");
    await engine.shutdown();
  });

  it("lets a workflow that catches the cancellation compensate and finish deliberately", async () => {
    const engine = await kind().open({ workflows: [Transfer] });
    const run = await engine.start(Transfer, "t-5", "compensates");
    await eventually("the step runs", async () => (await run.status()).status === "running" && (await sleep(20), true));
    await run.cancel("stop");
    expect(await run.result()).to.equal("refunded after cancel");
    expect((await run.status()).status).to.equal("ok");
    expect(seen).to.deep.equal(["refund"]);
    await engine.shutdown();
  });

  it("aborts the step's signal with a TerminatedError and journals nothing after the termination", async () => {
    const engine = await kind().open({ workflows: [Transfer] });
    const run = await runningStep(engine, "t-6", "heartbeats");
    await run.terminate("fraud");
    expect(await run.result().catch((e: unknown) => e)).to.be.instanceOf(TerminatedError);
    await eventually("the step stops", () => seen.at(-1)?.startsWith("heartbeat threw") === true);
    expect(seen.at(-1)).to.equal("heartbeat threw TerminatedError");
    await sleep(20);
    const journal = (await run.describe()).journal;
    expect(journal.at(-1)?.kind).to.equal("finish");
    expect(journal.map((r) => r.kind)).to.not.include("step");
    // Replaying the finished run (to answer a call) runs none of its steps again.
    expect(await run.update("nothing", 1).catch((e: unknown) => e)).to.be.instanceOf(RejectedError);
    await sleep(20);
    expect(seen.filter((s) => s === "debit started")).to.have.length(1);
    await engine.shutdown();
  });

  it("takes a step waiting for a limit's permit out of the queue, and it never runs", async () => {
    const engine = await kind().open({ workflows: [Gated], limits: { printer: { concurrent: 1 } } });
    const first = await engine.start(Gated, "g-1", undefined);
    await eventually("the first step holds the permit", () => seen.includes("print g-1"));
    const second = await engine.start(Gated, "g-2", undefined);
    await eventually("the second step waits", () => engine.limitWaiting("printer") === 1);
    await second.cancel("not needed");
    expect(await second.result().catch((e: unknown) => e)).to.be.instanceOf(CancelledError);
    expect(engine.limitWaiting("printer")).to.equal(0);
    releaseAll();
    expect(await first.result()).to.equal("printed");
    expect(seen).to.deep.equal(["print g-1"]);
    expect(engine.limitInUse("printer")).to.equal(0);
    await engine.shutdown();
  });

  it("aborts running steps when the engine shuts down", async () => {
    const engine = await kind().open({ workflows: [Transfer] });
    await runningStep(engine, "t-7", "heartbeats");
    await engine.shutdown();
    await eventually("the step stops", () => seen.at(-1)?.startsWith("heartbeat threw") === true);
    expect(seen.at(-1)).to.equal("heartbeat threw CancelledError");
  });
});

describe("a cancel that meets a running step, then a restart (local)", () => {
  let kind: EngineKind;
  beforeEach(() => {
    kind = localKind();
    seen.length = 0;
    letGo = [];
  });
  afterEach(async () => {
    releaseAll();
    await kind.cleanup();
  });

  it("does not run the step again after the restart, and ends the run cancelled", async () => {
    let engine = await kind.open({ workflows: [Transfer] });
    const run = await engine.start(Transfer, "t-8", "ignores");
    await eventually("the step runs", () => seen.includes("debit started"));
    await run.cancel("stop");
    await eventually("the step's signal aborts", () => seen.includes("abort seen: CancelledError"));
    await engine.shutdown();
    releaseAll();

    engine = await kind.reopen({ workflows: [Transfer] });
    const again = engine.run("t-8");
    expect(await again.result().catch((e: unknown) => e)).to.be.instanceOf(CancelledError);
    expect(seen.filter((s) => s === "debit started")).to.have.length(1);
    const detail = await again.describe();
    expect(detail.status).to.equal("cancelled");
    expect(detail.journal.map((r) => r.kind)).to.deep.equal(["start", "cancel", "step", "finish"]);
    await engine.shutdown();
  });
});
