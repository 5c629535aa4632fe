import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Step, Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { TimeoutError, WorkflowFailedError } from "../../src/core/errors.js";
import { registerType } from "../../src/workflow/payload-types.js";
import { onEachEngine } from "./harness.js";

class CardDeclined extends Error {
  constructor(readonly card: string) {
    super(`card ${card} declined`);
    this.name = "CardDeclined";
  }
}
registerType(CardDeclined);

class Unregistered extends Error {
  constructor() {
    super("nobody knows me");
    this.name = "Unregistered";
  }
}

const calls: string[] = [];

@Workflow()
class Checkout {
  constructor(private readonly ctx: Ctx) {}

  async run(cents: number): Promise<string> {
    const quote = await this.quote(cents);
    const receipt = await this.charge(quote);
    return `${quote}/${receipt}`;
  }

  @Step() async quote(cents: number): Promise<number> {
    calls.push(`quote:${cents}`);
    return cents + 1;
  }

  @Step({ retry: RetryPolicy.exponential(3, "1ms", "2ms") })
  async charge(quote: number): Promise<string> {
    calls.push(`charge:${this.ctx.attempt()}:${this.ctx.key()}`);
    if (this.ctx.attempt() < 3) throw new Error("gateway busy");
    return `r${quote}`;
  }
}

@Workflow()
class Failing {
  constructor(private readonly ctx: Ctx) {}

  async run(kind: string): Promise<string> {
    try {
      await this.ctx.step(
        "declined",
        async () => {
          calls.push("declined");
          throw kind === "registered" ? new CardDeclined("4242") : new Unregistered();
        },
        { retry: RetryPolicy.exponential(5, "1ms", "1ms").nonRetryable(CardDeclined, Unregistered) },
      );
      return "unreachable";
    } catch (e) {
      if (e instanceof CardDeclined) return `declined ${e.card}`;
      throw e;
    }
  }
}

@Workflow()
class Slow {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    return this.ctx.step(
      "slow",
      async () => {
        calls.push(`slow:${this.ctx.attempt()}`);
        if (this.ctx.attempt() === 1) await new Promise((r) => setTimeout(r, 200));
        return "done";
      },
      { timeout: "20ms", retry: RetryPolicy.exponential(2, "1ms", "1ms") },
    );
  }
}

onEachEngine("steps", (kind) => {
  beforeEach(() => {
    calls.length = 0;
  });

  it("journals each step's result, each failed attempt, and retries a failing step with one idempotency key", async () => {
    const engine = await kind().open({ workflows: [Checkout] });
    const run = await engine.start(Checkout, "co-1", 700);
    expect(await run.result()).to.equal("701/r701");
    const charges = calls.filter((c) => c.startsWith("charge"));
    expect(charges.map((c) => c.split(":")[1])).to.deep.equal(["1", "2", "3"]);
    expect(new Set(charges.map((c) => c.split(":").slice(2).join(":"))).size, "one key for all attempts").to.equal(1);
    const journal = (await run.describe()).journal;
    expect(journal.map((r) => r.kind)).to.deep.equal(["start", "step", "attempt", "attempt", "step", "finish"]);
    expect(journal.flatMap((r) => (r.kind === "attempt" ? [`${r.name} ${r.attempt}: ${r.error.message}`] : []))).to.deep.equal([
      "charge 1: gateway busy",
      "charge 2: gateway busy",
    ]);
    const charge = journal[4];
    expect(charge?.kind === "step" && charge.attempts).to.equal(3);
    await engine.shutdown();
  });

  it("journals one record for a step that succeeds at once", async () => {
    const engine = await kind().open({ workflows: [Checkout] });
    const run = await engine.start(Checkout, "co-2", 700);
    await run.result();
    const quote = (await run.describe()).journal.filter((r) => (r.kind === "step" || r.kind === "attempt") && r.name === "quote");
    expect(quote.map((r) => r.kind)).to.deep.equal(["step"]);
    await engine.shutdown();
  });

  it("returns a registered error class to the workflow as itself", async () => {
    const engine = await kind().open({ workflows: [Failing] });
    const run = await engine.start(Failing, "f-1", "registered");
    expect(await run.result()).to.equal("declined 4242");
    expect(calls, "non-retryable: one attempt").to.deep.equal(["declined"]);
    await engine.shutdown();
  });

  it("fails the run with WorkflowFailedError carrying name, message and stack of an unregistered error", async () => {
    const engine = await kind().open({ workflows: [Failing] });
    const run = await engine.start(Failing, "f-2", "unregistered");
    const err = await run.result().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).originalName).to.equal("Unregistered");
    expect((err as Error).message).to.equal("nobody knows me");
    expect((err as Error).stack).to.contain("Unregistered");
    expect((await run.status()).status).to.equal("failed");
    await engine.shutdown();
  });

  it("times out a slow attempt and retries it", async () => {
    const engine = await kind().open({ workflows: [Slow] });
    const run = await engine.start(Slow, "s-1", undefined);
    expect(await run.result()).to.equal("done");
    expect(calls).to.deep.equal(["slow:1", "slow:2"]);
    await engine.shutdown();
  });

  it("records the final error of a step whose attempts all time out", async () => {
    @Workflow("always-slow")
    class AlwaysSlow {
      constructor(private readonly ctx: Ctx) {}
      async run(): Promise<string> {
        return this.ctx.step("stuck", () => new Promise<string>((r) => setTimeout(() => r("late"), 100)), {
          timeout: "10ms",
          retry: RetryPolicy.none(),
        });
      }
    }
    const engine = await kind().open({ workflows: [AlwaysSlow] });
    const run = await engine.start(AlwaysSlow, "s-2", undefined);
    const err = await run.result().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(TimeoutError);
    expect((err as Error).message).to.contain("10ms");
    await engine.shutdown();
  });
});
