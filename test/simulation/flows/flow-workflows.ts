import "reflect-metadata";
import { CancelledError, Ctx, Query, RetryPolicy, Update, Workflow } from "@fusee/runtime";
import type { BeatPlan } from "./flow-plan.js";
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
  /** Limited steps whose run called them and whose body has not begun, by `<workflow>/<step>`. */
  readonly waiting = new Map<string, { readonly generation: number; readonly priority: number; readonly since: number }>();
  /** Attempts of heartbeating steps: where each began (the progress it saw) and the progress it reported. */
  readonly attempts: Array<{
    readonly generation: number;
    readonly workflowId: string;
    readonly attempt: number;
    readonly from: number;
    beats: number[];
  }> = [];
  /** Inputs of collecting runs (batch and debounce), by workflow ID. */
  readonly inputs = new Map<string, unknown>();
  /** The latest token each awaiting run sent, by workflow ID. */
  readonly tokens = new Map<string, string>();
  /** When each of those tokens was sent. */
  readonly tokenAt = new Map<string, number>();
  concurrent = 0;
  /** The limit bounds something (concurrency or rate), so steps wait for permits in priority order. */
  limited = false;
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
      const place = `${this.ctx.workflowId}/s${i}`;
      // Replayed steps return at once; a step that runs waits here for its permit until its body begins.
      if (this.gen.alive) this.gen.world.waiting.set(place, { generation: this.gen.n, priority: s.priority, since: this.gen.clock.now() });
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
      } finally {
        this.gen.world.waiting.delete(place);
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
      world.waiting.delete(`${b.workflowId}/${step}`);
      // Waiting steps are served by priority: none of a higher one may wait since before this one began.
      for (const [place, w] of world.waiting) {
        if (w.generation === gen.n && w.priority > s.priority && w.since < b.startedAt && world.limited)
          world.complaints.push(
            `${b.workflowId}/${step} (priority ${s.priority}) began at ${b.startedAt} while ${place} (priority ${w.priority}) waited since ${w.since}`,
          );
      }
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

/** How long an awaiting run waits for the answer to its token. */
export const AWAIT_TIMEOUT = 4000;

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
    // The run lingers after the answer, so later answers find the token used rather than the run ended.
    try {
      const value = await this.ctx.awaitCompletion<number>(
        "answer",
        ({ token }) => {
          if (!gen.alive) return;
          gen.world.tokens.set(id, token);
          gen.world.tokenAt.set(id, gen.clock.now());
        },
        { waitTimeout: AWAIT_TIMEOUT },
      );
      await this.ctx.sleep(1000);
      return value;
    } catch (e) {
      await this.ctx.sleep(1000);
      throw e;
    }
  }
}

/**
 * One long step that reports its progress with heartbeats, one unit per tick, and resumes from the
 * progress an earlier attempt left. Its first attempt fails after `failAfter` units, by throwing or by
 * falling silent until its heartbeat timeout aborts it.
 */
@Workflow("FBeat")
export class FBeat {
  constructor(
    private readonly ctx: Ctx,
    private readonly gen: FlowGeneration,
  ) {}

  async run(plan: BeatPlan): Promise<number> {
    return this.ctx.step("long", () => this.body(plan), { retry: RetryPolicy.exponential(4, 100, 100), heartbeatTimeout: 300 });
  }

  private async body(plan: BeatPlan): Promise<number> {
    const gen = this.gen;
    const from = this.ctx.progress<number>() ?? 0;
    const attempt = this.ctx.attempt();
    const signal = this.ctx.abortSignal;
    const record = { generation: gen.n, workflowId: this.ctx.workflowId, attempt, from, beats: [] as number[] };
    if (gen.alive) gen.world.attempts.push(record);
    const pause = (ms: number | undefined): Promise<void> =>
      new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        signal.addEventListener("abort", () => resolve(), { once: true });
        if (ms !== undefined) gen.clock.schedule(ms, resolve);
      });
    for (let done = from; done < plan.total;) {
      if (attempt === 1 && done === plan.failAfter) {
        if (plan.fail === "stall") await pause(undefined);
        throw new Error(`attempt ${attempt} gives up at ${done}`);
      }
      await pause(100);
      if (signal.aborted) throw new Error(`attempt ${attempt} was aborted at ${done}`);
      done++;
      this.ctx.heartbeat(done);
      record.beats.push(done);
    }
    return plan.total;
  }
}

/** How long a versioned run waits before the point its second version patched. */
export const PATCH_HOLD = 1500;
/** How long it waits after that point: long enough for a later version to find it in flight. */
export const PATCH_TAIL = 6000;

/** The first version of a workflow: a wait, a step, another wait. */
@Workflow("FPatch")
export class FPatchV1 {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.sleep(PATCH_HOLD);
    await this.ctx.step("mid", async () => 1);
    await this.ctx.sleep(PATCH_TAIL);
    return "v1";
  }
}

/**
 * Its second version: a new step after the first wait, behind a patch. A run that passed that point
 * under the first version replays the old path; one that reaches it under this version takes the new.
 */
@Workflow("FPatch")
export class FPatchV2 {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.sleep(PATCH_HOLD);
    const patched = this.ctx.patched("extra");
    if (patched) await this.ctx.step("extra", async () => 2);
    await this.ctx.step("mid", async () => 1);
    await this.ctx.sleep(PATCH_TAIL);
    return patched ? "v2" : "v1";
  }
}

/**
 * Its third version, deployed once the second made every new run take the patch: `deprecatePatch`
 * in place of the `if`. A run that took the new path (its journal holds the patch record) replays
 * it; one that passed the point under the first version no longer matches its journal and stops.
 */
@Workflow("FPatch")
export class FPatchV3 {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.sleep(PATCH_HOLD);
    this.ctx.deprecatePatch("extra");
    await this.ctx.step("extra", async () => 2);
    await this.ctx.step("mid", async () => 1);
    await this.ctx.sleep(PATCH_TAIL);
    return "v2";
  }
}

/** The versions of `FPatch`, the first at index 0. */
export const PATCH_VERSIONS = [FPatchV1, FPatchV2, FPatchV3] as const;

/**
 * A run that applies updates until a `next` signal makes it continue as new, as run `gen` + 1 of its
 * ID: an update answers with the run that applied it and the call that asked, so a repeated update
 * ID answered from memory tells itself apart from one applied again.
 */
@Workflow("FDedup")
export class FDedup {
  private gen = 0;
  private readonly applied: number[] = [];

  constructor(private readonly ctx: Ctx) {}

  async run(gen: number): Promise<void> {
    this.gen = gen;
    await this.ctx.waitFor("next");
    return this.ctx.continueAsNew(gen + 1);
  }

  @Update() bump(call: number): string {
    this.applied.push(call);
    return `${this.gen}:${call}`;
  }

  /** The calls whose updates this run applied, in order. */
  @Query() appliedCalls(): number[] {
    return [...this.applied];
  }
}

export const FLOW_WORKFLOWS = [FJob, FLimited, FCollect, FAwait, FBeat, FDedup];
