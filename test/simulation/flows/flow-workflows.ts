import "reflect-metadata";
import { CancelledError, Ctx, RetryPolicy, Workflow } from "@fusee/runtime";
import type { VirtualClock } from "@fusee/runtime/testing";
import type { LimitedStep } from "./flow-plan.js";

/** The name of the one limit the plans declare. */
export const LIMIT = "L";

/** One execution of a limited step's body, as the outside world saw it. */
export interface BodyRun {
  readonly generation: number;
  readonly workflowId: string;
  readonly step: string;
  readonly startedAt: number;
  endedAt: number | undefined;
  aborted: boolean;
}

/**
 * What the outside world of a plan saw, across every engine the plan opened: limited bodies, the
 * inputs runs were started with, the tokens runs sent. Bodies of an engine that died stop counting.
 */
export class FlowWorld {
  readonly bodies: BodyRun[] = [];
  /** Bodies running now, by engine generation. */
  readonly running = new Map<number, number>();
  /** Problems the bodies themselves noticed (a bound exceeded), reported by the next check. */
  readonly complaints: string[] = [];
  /** Inputs of collecting runs (batch and debounce), by workflow ID. */
  readonly inputs = new Map<string, unknown>();
  /** The latest token each awaiting run sent, by workflow ID. */
  readonly tokens = new Map<string, string>();
  concurrent = 0;
}

/** One engine's life: workflow instances get theirs injected, so a body knows whether its engine still counts. */
export class FlowGeneration {
  alive = true;

  constructor(
    readonly n: number,
    readonly world: FlowWorld,
    readonly clock: VirtualClock,
  ) {}
}

/** What schedules start: a run that sleeps (a durable timer) for the hold its schedule gave it. */
@Workflow("FJob")
export class FJob {
  constructor(private readonly ctx: Ctx) {}

  async run(input: { hold: number }): Promise<string> {
    await this.ctx.sleep(input.hold);
    return "held";
  }
}

/**
 * Steps under the plan's limit, each with its priority and fairness key and a timeout, no retry:
 * the run's result says which ended ok and which failed. Bodies honour `ctx.abortSignal`.
 */
@Workflow("FLimited")
export class FLimited {
  constructor(
    private readonly ctx: Ctx,
    private readonly gen: FlowGeneration,
  ) {}

  async run(steps: LimitedStep[]): Promise<string[]> {
    const outcomes: string[] = [];
    for (let i = 0; i < steps.length; i++) {
      const s = steps[i] as LimitedStep;
      try {
        await this.ctx.step(`s${i}`, () => this.body(`s${i}`, s), {
          limit: LIMIT,
          priority: s.priority,
          fairness: s.fairness,
          timeout: s.timeoutMs,
          retry: RetryPolicy.none(),
        });
        outcomes.push("ok");
      } catch (e) {
        if (e instanceof CancelledError) throw e;
        outcomes.push("failed");
      }
    }
    return outcomes;
  }

  private async body(step: string, s: LimitedStep): Promise<string> {
    const gen = this.gen;
    const world = gen.world;
    const signal = this.ctx.abortSignal;
    const b: BodyRun | undefined = gen.alive
      ? { generation: gen.n, workflowId: this.ctx.workflowId, step, startedAt: gen.clock.now(), endedAt: undefined, aborted: false }
      : undefined;
    if (b !== undefined) {
      world.bodies.push(b);
      const now = (world.running.get(gen.n) ?? 0) + 1;
      world.running.set(gen.n, now);
      if (world.concurrent > 0 && now > world.concurrent) {
        world.complaints.push(
          `${now} bodies under limit '${LIMIT}' (concurrent ${world.concurrent}) ran at once when ${this.ctx.workflowId}/${step} began`,
        );
      }
    }
    try {
      await new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        signal.addEventListener("abort", () => resolve(), { once: true });
        if (s.body === "ok") gen.clock.schedule(s.workMs, resolve);
      });
      if (signal.aborted) {
        if (b !== undefined) b.aborted = true;
        throw new Error(`${step} was aborted`);
      }
      return "worked";
    } finally {
      if (b !== undefined && gen.alive) {
        b.endedAt = gen.clock.now();
        world.running.set(gen.n, (world.running.get(gen.n) ?? 1) - 1);
      }
    }
  }
}

/** What batches and debounced starts start: a run that remembers its input and returns it. */
@Workflow("FCollect")
export class FCollect {
  constructor(
    private readonly ctx: Ctx,
    private readonly gen: FlowGeneration,
  ) {}

  async run(input: unknown): Promise<unknown> {
    if (this.gen.alive) this.gen.world.inputs.set(this.ctx.workflowId, input);
    await this.ctx.sleep(0);
    return input;
  }
}

/** Waits for the answer to a token it sends (`engine.complete` or `engine.fail`) and returns it. */
@Workflow("FAwait")
export class FAwait {
  constructor(
    private readonly ctx: Ctx,
    private readonly gen: FlowGeneration,
  ) {}

  async run(): Promise<number> {
    const gen = this.gen;
    const id = this.ctx.workflowId;
    return this.ctx.awaitCompletion<number>("answer", ({ token }) => {
      if (gen.alive) gen.world.tokens.set(id, token);
    });
  }
}

export const FLOW_WORKFLOWS = [FJob, FLimited, FCollect, FAwait];
