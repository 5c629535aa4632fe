import { Ctx } from "../../src/workflow/ctx.js";
import { Signal, Update, Workflow } from "../../src/workflow/decorators.js";

/** Called as the receiving workflows run live; a crash test kills its process there. */
export const resendHooks: { onFirstRound?: () => void; onBump?: () => void } = {};

/** Continues as new at once, then waits to be closed. */
@Workflow()
export class Looper {
  private closed = false;
  constructor(private readonly ctx: Ctx<Looper>) {}

  async run(round: number): Promise<number> {
    if (round === 0) {
      resendHooks.onFirstRound?.();
      return this.ctx.continueAsNew(1);
    }
    await this.ctx.condition(() => this.closed);
    return round;
  }

  @Signal() close(): void {
    this.closed = true;
  }
}

/** Adds what each `bump` update brings, continuing as new after the first, until closed. */
@Workflow()
export class Summer {
  private total = 0;
  private bumps = 0;
  private closed = false;
  constructor(private readonly ctx: Ctx<Summer>) {}

  async run(carried: number): Promise<number> {
    this.total += carried;
    await this.ctx.condition(() => this.bumps > 0 || this.closed);
    if (this.closed) return this.total;
    return this.ctx.continueAsNew(this.total);
  }

  @Update() async bump(n: number): Promise<number> {
    this.total += n;
    this.bumps++;
    resendHooks.onBump?.();
    return this.total;
  }

  @Signal() close(): void {
    this.closed = true;
  }
}

/** Starts a Looper, then finishes. */
@Workflow()
export class LooperStarter {
  constructor(private readonly ctx: Ctx) {}

  async run(target: string): Promise<string> {
    await this.ctx.startWorkflow(Looper, target, 0);
    return this.ctx.step("after", async () => "started once");
  }
}

/** Bumps a Summer once by update and returns its answer. */
@Workflow()
export class Bumper {
  constructor(private readonly ctx: Ctx) {}

  async run(target: string): Promise<number> {
    return this.ctx.updateWorkflow<number>(target, "bump", 5);
  }
}
