import "reflect-metadata";
import { expect } from "chai";
import { DurationError, toMillis, type Duration } from "../../src/core/duration.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { eventually, localKind, sleep, type EngineKind } from "./harness.js";

class CardDeclined extends Error {}

/** Attempt numbers as the step saw them. */
const attempts: number[] = [];

@Workflow()
class Flaky {
  constructor(private readonly ctx: Ctx) {}

  async run(failures: number): Promise<string> {
    return this.ctx.step(
      "charge",
      async () => {
        attempts.push(this.ctx.attempt());
        if (this.ctx.attempt() <= failures) throw new Error(`gateway down (attempt ${this.ctx.attempt()})`);
        return `charged on attempt ${this.ctx.attempt()}`;
      },
      { retry: RetryPolicy.unlimited("1 minute", "1 minute") },
    );
  }
}

@Workflow()
class Declined {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    return this.ctx.step(
      "charge",
      async () => {
        attempts.push(this.ctx.attempt());
        throw new CardDeclined("card declined");
      },
      { retry: RetryPolicy.unlimited("1s").nonRetryable(CardDeclined) },
    );
  }
}

@Workflow()
class Bounded {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    return this.ctx.step(
      "charge",
      async () => {
        attempts.push(this.ctx.attempt());
        throw new Error(`gateway down (attempt ${this.ctx.attempt()})`);
      },
      { retry: RetryPolicy.unlimited("150ms", "150ms").within("1s") },
    );
  }
}

@Workflow()
class Sleeper {
  constructor(private readonly ctx: Ctx) {}

  async run(wait: string): Promise<string> {
    try {
      await this.ctx.sleep(wait as Duration);
    } catch (e) {
      return `${(e as DurationError).code}: ${(e as Error).message}`;
    }
    return `slept ${this.ctx.now()}`;
  }
}

describe("durations", () => {
  describe("toMillis", () => {
    it("should read durations as people write them", () => {
      expect(toMillis("30 days")).to.equal(30 * 86_400_000);
      expect(toMillis("1 minute")).to.equal(60_000);
      expect(toMillis("1h30m")).to.equal(5_400_000);
      expect(toMillis("2 weeks")).to.equal(14 * 86_400_000);
      expect(toMillis("1 hour 30 minutes")).to.equal(5_400_000);
      expect(toMillis("1.5s")).to.equal(1_500);
      expect(toMillis(250)).to.equal(250);
      expect(toMillis("250")).to.equal(250);
    });

    it("should refuse what it cannot read with a DurationError naming the text", () => {
      for (const text of ["30 dayz", "soon", "", "1h30", "-1s"]) {
        const call = () => toMillis(text, "ctx.sleep duration");
        expect(call, text).to.throw(DurationError, `ctx.sleep duration ${JSON.stringify(text)}`);
      }
      expect(() => toMillis(-5)).to.throw(DurationError, /-5/);
    });

    it("should make an unreadable literal a compile error", () => {
      // Each line below fails to compile without its directive, which itself fails if the line compiles.
      // @ts-expect-error a misspelt unit
      const misspelt: Duration = "30 dayz";
      // @ts-expect-error a number without a unit in a compound
      const dangling: Duration = "1h30";
      const fine: Duration[] = ["30 days", "1 minute", "1h30m", "2 weeks", "150ms", 250, "1 hour 30 minutes"];
      expect([misspelt, dangling, ...fine]).to.have.length(9);
    });
  });

  describe("ctx.sleep with a duration only known at run time", () => {
    it("should throw a DurationError at the call, before anything is journaled", async () => {
      const engine = await TestEngine.create({ workflows: [Sleeper] });
      const run = await engine.start(Sleeper, "sleep-1", "a fortnight");
      expect(await run.result()).to.equal(`FUSEE_DURATION: ctx.sleep duration "a fortnight" is not a duration; write ms as a number, or text such as "150ms", "1h30m", "30 days" or "2 weeks"`);
      expect((await run.describe()).journal.map((r) => r.kind)).to.deep.equal(["start", "finish"]);
      await engine.shutdown();
    });

    it("should sleep for 30 days", async () => {
      const engine = await TestEngine.create({ workflows: [Sleeper], startTime: 0 });
      const run = await engine.start(Sleeper, "sleep-2", "30 days");
      await engine.clock.advance("29 days");
      expect((await run.status()).status).to.equal("suspended");
      await engine.clock.advance("1 day");
      expect(await run.result()).to.equal(`slept ${30 * 86_400_000}`);
      await engine.shutdown();
    });
  });
});

describe("retry policies", () => {
  beforeEach(() => {
    attempts.length = 0;
  });

  it("should retry without limit until the step succeeds", async () => {
    const engine = await TestEngine.create({ workflows: [Flaky] });
    const run = await engine.start(Flaky, "flaky-1", 12);
    for (let i = 0; i < 12; i++) await engine.clock.advance("1 minute");
    expect(await run.result()).to.equal("charged on attempt 13");
    expect(attempts).to.have.length(13);
    await engine.shutdown();
  });

  it("should stop at once on a non-retryable error, also without an attempt limit", async () => {
    const engine = await TestEngine.create({ workflows: [Declined] });
    const run = await engine.start(Declined, "declined-1", undefined);
    const err = (await run.result().catch((e: unknown) => e)) as Error;
    expect(err.message).to.equal("card declined");
    expect(attempts).to.deep.equal([1]);
    await engine.shutdown();
  });

  it("should refuse a policy that cannot work", () => {
    expect(() => RetryPolicy.exponential(0)).to.throw(/maxAttempts/);
    expect(() => RetryPolicy.unlimited().within("whenever" as string as Duration)).to.throw(DurationError, /"whenever"/);
  });

  describe("within", () => {
    let kind: EngineKind;
    beforeEach(() => {
      kind = localKind();
    });
    afterEach(() => kind.cleanup());

    it("should bound the total time across attempts on the virtual clock", async () => {
      const engine = await TestEngine.create({ workflows: [Bounded] });
      const run = await engine.start(Bounded, "bounded-1", undefined);
      for (let i = 0; i < 10; i++) await engine.clock.advance("150ms");
      const err = (await run.result().catch((e: unknown) => e)) as Error;
      // Attempts begin at 0, 150, ..., 900 ms; one at 1050 ms would begin past the bound.
      expect(err.message).to.equal("gateway down (attempt 7)");
      expect(attempts).to.have.length(7);
      await engine.shutdown();
    });

    it("should count the time from the first attempt across a restart", async () => {
      let engine = await kind.open({ workflows: [Bounded] });
      await engine.start(Bounded, "bounded-2", undefined);
      await eventually("attempt 2 journaled", async () => (await engine.describe("bounded-2"))!.journal.some((r) => r.kind === "attempt" && r.attempt === 2));
      await engine.shutdown();
      await sleep(1_200);
      const before = attempts.length;
      engine = await kind.reopen({ workflows: [Bounded] });
      const err = (await engine
        .run("bounded-2")
        .result()
        .catch((e: unknown) => e)) as Error;
      // The attempt that was due when the engine stopped runs; after it the bound is spent.
      expect(attempts.length - before).to.equal(1);
      expect(err.message).to.match(/^gateway down/);
      await engine.shutdown();
    });
  });
});
