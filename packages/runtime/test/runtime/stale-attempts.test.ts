import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { TimeoutError } from "../../src/core/errors.js";
import { eventually, onEachEngine, sleep } from "./harness.js";

/** Effects that reached "the outside world", and what stale attempts were told. */
const effects: string[] = [];
const told: string[] = [];

@Workflow()
class Payout {
  constructor(private readonly ctx: Ctx) {}

  async run(kind: "timeout" | "heartbeat"): Promise<string> {
    return this.ctx.step(
      "pay",
      async () => {
        const attempt = this.ctx.attempt();
        const signal = this.ctx.abortSignal;
        if (attempt === 1) {
          // The first attempt stalls past its deadline, as a slow gateway would.
          for (let i = 0; i < 20; i++) {
            await sleep(10);
            if (kind === "heartbeat" && i < 2) this.ctx.heartbeat(i);
          }
          try {
            this.ctx.heartbeat("late");
          } catch (e) {
            told.push(`attempt 1 heartbeat: ${(e as Error).name}`);
          }
          told.push(`attempt 1 signal: ${signal.aborted} ${(signal.reason as Error | undefined)?.name}`);
          if (!signal.aborted) effects.push("paid by attempt 1");
          return "paid late";
        }
        effects.push(`paid by attempt ${attempt}`);
        return `paid by attempt ${attempt}`;
      },
      kind === "timeout"
        ? { timeout: "50ms", retry: RetryPolicy.exponential(2, "1ms", "1ms") }
        : { heartbeatTimeout: "50ms", retry: RetryPolicy.exponential(2, "1ms", "1ms") },
    );
  }
}

onEachEngine("a step attempt that ran past its timeout", (kind) => {
  beforeEach(() => {
    effects.length = 0;
    told.length = 0;
  });

  for (const timeout of ["timeout", "heartbeat"] as const) {
    it(`is aborted with a TimeoutError and its heartbeats throw, so only its retry pays (${timeout})`, async () => {
      const engine = await kind().open({ workflows: [Payout] });
      const run = await engine.start(Payout, `p-${timeout}`, timeout);
      expect(await run.result()).to.equal("paid by attempt 2");
      await eventually("the stale attempt ends", () => told.length === 2, 5_000);
      expect(told).to.deep.equal(["attempt 1 heartbeat: TimeoutError", "attempt 1 signal: true TimeoutError"]);
      expect(effects).to.deep.equal(["paid by attempt 2"]);
      const attempts = (await run.describe()).journal.filter((r) => r.kind === "attempt");
      expect(attempts.map((r) => r.kind === "attempt" && r.error)).to.satisfy((errors: Error[]) =>
        errors.every((e) => e instanceof TimeoutError),
      );
      await engine.shutdown();
    });
  }
});
