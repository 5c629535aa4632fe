import "reflect-metadata";
import { expect } from "chai";
import { CancelledError, RejectedError, ShutDownError } from "../../src/core/errors.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { eventually, localKind, type EngineKind } from "../runtime/harness.js";

let aborted: unknown[] = [];

@Workflow("shut-down-waiter")
class Waiter {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string | undefined> {
    return this.ctx.waitFor<string>("go");
  }
}

@Workflow("shut-down-holder")
class Holder {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    return this.ctx.step("hold", async () => {
      const signal = this.ctx.abortSignal;
      return new Promise<string>((_, reject) =>
        signal.addEventListener("abort", () => {
          aborted.push(signal.reason);
          reject(signal.reason as Error);
        }),
      );
    });
  }
}

/** What `promise` rejects with; fails the test when it resolves. */
async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (v) => expect.fail(`resolved with ${JSON.stringify(v)}`),
    (e: unknown) => e,
  );
}

/** Asserts `error` is the one error of a shut-down engine: its class, code, reason and wording. */
function isShutDown(error: unknown, what: string): void {
  expect(error, what).to.be.instanceOf(ShutDownError).and.instanceOf(RejectedError);
  expect((error as ShutDownError).code, what).to.equal("FUSEE_SHUT_DOWN");
  expect((error as ShutDownError).reason, what).to.equal("shut-down");
  expect((error as ShutDownError).message, what).to.contain("the engine is shut down");
}

describe("A shut-down engine's errors", () => {
  let local: EngineKind;
  beforeEach(() => {
    aborted = [];
    local = localKind();
  });
  afterEach(async () => {
    await local.cleanup();
  });

  it("are one ShutDownError for calls made after it and waiters it cuts off; running steps hear a cancellation", async () => {
    const engine = await local.open({ workflows: [Waiter, Holder] });
    const waiting = await engine.start(Waiter, "waiter-1", undefined);
    const holding = await engine.start(Holder, "holder-1", undefined);
    await eventually("the waiter suspended", async () => (await waiting.status()).status === "suspended");
    const result = refusal(waiting.result());
    await engine.shutdown();

    isShutDown(await result, "a result awaited across the shutdown");
    await eventually("the step aborted", () => aborted.length === 1);
    expect(aborted[0], "a running step's abort signal").to.be.instanceOf(CancelledError);
    expect((aborted[0] as CancelledError).message).to.contain("the engine is shut down");
    isShutDown(await refusal(engine.start(Waiter, "waiter-2", undefined)), "a start after the shutdown");
    isShutDown(await refusal(holding.signal("go", "late")), "a signal after the shutdown");
    isShutDown(await refusal(engine.schedule("late", { workflow: Waiter, every: "1h" })), "a schedule set after the shutdown");
  });
});
