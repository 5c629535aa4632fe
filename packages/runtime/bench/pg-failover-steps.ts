import "reflect-metadata";
import { Ctx } from "../src/workflow/ctx.js";
import { Workflow } from "../src/workflow/decorators.js";

/** Input of {@link SlowSteps}: the starting total, the number of steps and how long each takes. */
export interface SlowInput {
  readonly n: number;
  readonly steps: number;
  readonly stepMs: number;
}

/** When this process ran each run's steps, in ms on the epoch clock, so two processes compare. */
export const stepTimes = new Map<string, { started: number; completed: number }[]>();

/** The epoch clock with sub-millisecond resolution. */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Long-running steps, so a run is still going when its process is killed. Only steps this process
 * executed are timed: steps replayed from the journal after a takeover run no code and say nothing
 * about when the new owner got going.
 */
@Workflow("bench-slow")
export class SlowSteps {
  constructor(private readonly ctx: Ctx) {}

  async run(input: SlowInput): Promise<number> {
    let total = input.n;
    for (let i = 0; i < input.steps; i++) {
      let started: number | undefined;
      total = await this.ctx.step("slow", async () => {
        started = epochMs();
        await new Promise((r) => setTimeout(r, input.stepMs));
        return total + 1;
      });
      if (started !== undefined) {
        const times = stepTimes.get(this.ctx.workflowId) ?? [];
        times.push({ started, completed: epochMs() });
        stepTimes.set(this.ctx.workflowId, times);
      }
    }
    return total;
  }
}
