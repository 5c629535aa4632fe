import { CancelledError } from "../../../src/core/errors.js";
import { Ctx } from "../../../src/workflow/ctx.js";
import { Workflow } from "../../../src/workflow/decorators.js";

/** Two steps, then a wait for signal `go`: resets land on a step and find the run waiting. */
@Workflow("two-steps-then-go")
export class TwoStepsThenGo {
  constructor(private readonly ctx: Ctx) {}

  async run(n: number): Promise<number> {
    const a = await this.ctx.step("a", async () => n);
    const b = await this.ctx.step("b", async () => a + 1);
    const go = await this.ctx.waitFor<number>("go");
    return a + b + (go ?? 0);
  }
}

/** Catches the cancellation of its wait and returns. */
@Workflow()
export class Stubborn {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    try {
      await this.ctx.waitFor("never");
    } catch (e) {
      if (e instanceof CancelledError) return "ignored the cancellation";
    }
    return "unreachable";
  }
}
