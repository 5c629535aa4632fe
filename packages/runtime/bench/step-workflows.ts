import "reflect-metadata";
import { Ctx } from "../src/workflow/ctx.js";
import { Workflow } from "../src/workflow/decorators.js";

/** Steps in each benchmark workflow. */
export const STEPS = 10;

/** Where {@link TimedSteps} records each step's latency in µs; an empty sink records nothing. */
export const stepLatencies: { into: Float64Array; count: number } = { into: new Float64Array(0), count: 0 };

/** Ten sequential steps, each timed from the call to the workflow going on. */
@Workflow("bench-timed")
export class TimedSteps {
  constructor(private readonly ctx: Ctx) {}

  async run(n: number): Promise<number> {
    let total = n;
    for (let i = 0; i < STEPS; i++) {
      const t0 = performance.now();
      total = await this.ctx.step("add", async () => total + 1);
      if (stepLatencies.count < stepLatencies.into.length) stepLatencies.into[stepLatencies.count++] = (performance.now() - t0) * 1000;
    }
    return total;
  }
}

/** Ten sequential steps, untimed: the throughput benchmarks run thousands of these at once. */
@Workflow("bench-plain")
export class PlainSteps {
  constructor(private readonly ctx: Ctx) {}

  async run(n: number): Promise<number> {
    let total = n;
    for (let i = 0; i < STEPS; i++) total = await this.ctx.step("add", async () => total + 1);
    return total;
  }
}
