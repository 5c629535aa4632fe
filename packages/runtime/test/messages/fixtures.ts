import { Ctx } from "../../src/workflow/ctx.js";
import { Query, Signal, Update, Workflow } from "../../src/workflow/decorators.js";

/** Called by `Tally.add` as the signal is applied live; a crash test kills its process there. */
export const hooks: { onAdd?: (n: number) => void } = {};

/** Receives numbers by signal until closed; answers their sum by update. */
@Workflow()
export class Tally {
  private seen: number[] = [];
  private closed = false;
  constructor(private readonly ctx: Ctx) {}

  async run(label: string): Promise<string> {
    await this.ctx.condition(() => this.closed);
    return `${label}: ${this.seen.join(",")}`;
  }

  @Signal() add(n: number): void {
    this.seen.push(n);
    hooks.onAdd?.(n);
  }

  @Signal() close(): void {
    this.closed = true;
  }

  @Update({
    validate(this: Tally, scale: number) {
      if (scale <= 0) throw new Error("scale must be positive");
    },
  })
  async total(scale: number): Promise<number> {
    return this.seen.reduce((a, b) => a + b, 0) * scale;
  }

  @Query() numbers(): number[] {
    return this.seen;
  }
}

/** Starts a Tally, sends it numbers, asks for the total, and closes it: every message from workflow code. */
@Workflow()
export class Messenger {
  constructor(private readonly ctx: Ctx) {}

  async run(target: string): Promise<number> {
    await this.ctx.startWorkflow(Tally, target, "tally");
    await this.ctx.signalWorkflow(target, "add", 1);
    await this.ctx.signalWorkflow(target, "add", 2);
    const total = await this.ctx.updateWorkflow<number>(target, "total", 10);
    await this.ctx.signalWorkflow(target, "close");
    return total;
  }
}
