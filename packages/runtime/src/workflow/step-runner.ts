import type { Clock, ClockTimer } from "../core/clock.js";
import { toMillis } from "../core/duration.js";
import { FuseeError, TimeoutError } from "../core/errors.js";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry-policy.js";
import { stepScope, type StepScope } from "./run-binding.js";
import type { StepOptions } from "./step-options.js";

/**
 * What a step's attempts need from the run that calls the step (call `seq`). One environment
 * serves every step of a run, so starting a step allocates no closures for it.
 */
export interface StepEnvironment {
  readonly clock: Clock;
  /** The idempotency key of call `seq`: the same for every attempt of the call. */
  stepKey(seq: number): string;
  /** Progress left by an earlier attempt's heartbeat. */
  stepProgress(seq: number): unknown;
  onHeartbeat(seq: number, progress: unknown): void;
  /** True once nothing the step does can be recorded any more (the engine shut down). */
  abandoned(): boolean;
  /**
   * Waits for a permit of the step's limit before each attempt and returns its release; `undefined`
   * when the step has no limit. The permit is released when the attempt ends, before any backoff.
   */
  acquire(options: StepOptions): Promise<() => void> | undefined;
  /**
   * Takes the outcome of all attempts of call `seq`: its value when `ok`, else its last error.
   * `attempts` counts the attempts that ran.
   */
  stepSettled(seq: number, name: string, ok: boolean, outcome: unknown, attempts: number): void;
}

/**
 * Runs the attempts of step call `seq` and reports their outcome to `env.stepSettled`: each attempt
 * in its own async scope (for `ctx.key()`, `ctx.attempt()`, `ctx.heartbeat()`), bounded by its
 * timeouts, retried by its policy. Delays and timeouts use the engine's clock, so a virtual clock
 * drives them in tests.
 *
 * Every step of every run passes through here, so an attempt costs one promise reaction and no
 * promise of its own; the outcome is always reported on a later microtask, never during the call.
 */
export function runStep(fn: () => unknown, options: StepOptions, env: StepEnvironment, seq: number, name: string): void {
  new StepCall(fn, options, env, seq, name).next();
}

/** One step call across its attempts. */
class StepCall {
  /** The attempt running or last run (1-based). */
  attempt = 0;
  /** True while the current attempt runs and has not ended. */
  running = false;
  progress: unknown;
  lastBeat = 0;
  private release: (() => void) | undefined = undefined;
  private timers: ClockTimer[] | undefined = undefined;
  private readonly timeoutMs: number | undefined;
  private readonly heartbeatMs: number | undefined;

  constructor(
    private readonly fn: () => unknown,
    private readonly options: StepOptions,
    readonly env: StepEnvironment,
    readonly seq: number,
    private readonly name: string,
  ) {
    this.timeoutMs = options.timeout === undefined ? undefined : toMillis(options.timeout);
    this.heartbeatMs = options.heartbeatTimeout === undefined ? undefined : toMillis(options.heartbeatTimeout);
    this.progress = env.stepProgress(seq);
  }

  /** Starts the next attempt once the step's limit (if any) grants a permit. */
  next(): void {
    const attempt = ++this.attempt;
    let permit: Promise<() => void> | undefined;
    try {
      permit = this.env.acquire(this.options);
    } catch (error) {
      // No permit can be had (the limit was never declared): the attempt does not run, nor retry.
      return this.report(false, error, attempt - 1);
    }
    if (permit === undefined) return this.run(attempt);
    permit.then(
      (release) => {
        if (this.env.abandoned()) {
          release();
          return this.report(false, new FuseeError("the step was abandoned while it waited for a permit"), attempt - 1);
        }
        this.release = release;
        this.run(attempt);
      },
      (error: unknown) => this.report(false, error, attempt - 1),
    );
  }

  private run(attempt: number): void {
    this.running = true;
    if (this.timeoutMs !== undefined) {
      const ms = this.timeoutMs;
      (this.timers ??= []).push(
        this.env.clock.schedule(ms, () => this.end(attempt, false, new TimeoutError(`step attempt ${attempt} ran past its timeout of ${ms}ms`))),
      );
    }
    if (this.heartbeatMs !== undefined) {
      this.lastBeat = this.env.clock.now();
      this.watchHeartbeat(attempt, this.heartbeatMs);
    }
    let result: unknown;
    try {
      result = stepScope.run(new AttemptScope(this, attempt), this.fn);
    } catch (error) {
      result = Promise.reject(error);
    }
    Promise.resolve(result).then(
      (value) => this.end(attempt, true, value),
      (error: unknown) => this.end(attempt, false, error),
    );
  }

  private watchHeartbeat(attempt: number, delay: number): void {
    const limit = this.heartbeatMs as number;
    (this.timers ??= []).push(
      this.env.clock.schedule(delay, () => {
        if (attempt !== this.attempt || !this.running) return;
        const quiet = this.env.clock.now() - this.lastBeat;
        if (quiet >= limit) {
          this.end(attempt, false, new TimeoutError(`step attempt ${attempt} sent no heartbeat for ${quiet}ms (heartbeatTimeout ${limit}ms)`));
        } else this.watchHeartbeat(attempt, limit - quiet);
      }),
    );
  }

  /** The attempt's outcome; later outcomes of the same attempt (a timeout racing the code) are ignored. */
  private end(attempt: number, ok: boolean, outcome: unknown): void {
    if (attempt !== this.attempt || !this.running) return;
    this.running = false;
    if (this.timers !== undefined) {
      for (const t of this.timers) t.cancel();
      this.timers = undefined;
    }
    const release = this.release;
    this.release = undefined;
    release?.();
    if (ok) return this.report(true, outcome, attempt);
    const retry: RetryPolicy = this.options.retry ?? DEFAULT_RETRY;
    const delay = retry.delayAfter(attempt, outcome);
    if (delay === undefined || this.env.abandoned()) return this.report(false, outcome, attempt);
    this.env.clock.schedule(delay, () => {
      if (this.env.abandoned()) this.report(false, outcome, attempt);
      else this.next();
    });
  }

  private report(ok: boolean, outcome: unknown, attempts: number): void {
    this.env.stepSettled(this.seq, this.name, ok, outcome, attempts);
  }
}

/** What one attempt's code sees through `ctx`; an attempt that ended no longer heartbeats. */
class AttemptScope implements StepScope {
  constructor(
    private readonly call: StepCall,
    readonly attempt: number,
  ) {}

  get owner(): object {
    return this.call.env;
  }

  get key(): string {
    return this.call.env.stepKey(this.call.seq);
  }

  get progress(): unknown {
    return this.call.progress;
  }

  heartbeat(progress: unknown): void {
    const call = this.call;
    if (call.attempt !== this.attempt || !call.running) return;
    call.progress = progress;
    call.lastBeat = call.env.clock.now();
    call.env.onHeartbeat(call.seq, progress);
  }
}
