import type { Clock, ClockTimer } from "../core/clock.js";
import { toMillis } from "../core/duration.js";
import { FuseeError, TimeoutError } from "../core/errors.js";
import { DEFAULT_RETRY } from "./retry-policy.js";
import { stepScope, type StepScope } from "./run-binding.js";
import type { StepOptions } from "./step-options.js";

/** The outcome of all attempts of one step. */
export type StepOutcome =
  | { readonly ok: true; readonly value: unknown; readonly attempts: number }
  | { readonly ok: false; readonly error: unknown; readonly attempts: number };

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
}

/**
 * Runs a step's attempts: each in its own async scope (for `ctx.key()`, `ctx.attempt()`,
 * `ctx.heartbeat()`), bounded by its timeouts, retried by its policy. Delays and timeouts use the
 * engine's clock, so a virtual clock drives them in tests.
 */
export async function runStep(fn: () => unknown, options: StepOptions, env: StepEnvironment, seq: number): Promise<StepOutcome> {
  const retry = options.retry ?? DEFAULT_RETRY;
  const timeoutMs = options.timeout === undefined ? undefined : toMillis(options.timeout);
  const heartbeatMs = options.heartbeatTimeout === undefined ? undefined : toMillis(options.heartbeatTimeout);
  let progress = env.stepProgress(seq);
  for (let attempt = 1; ; attempt++) {
    let release: (() => void) | undefined;
    try {
      const permit = env.acquire(options);
      if (permit !== undefined) release = await permit;
    } catch (error) {
      // No permit can be had (the limit was never declared): the attempt does not run, nor retry.
      return { ok: false, error, attempts: attempt - 1 };
    }
    if (release !== undefined && env.abandoned()) {
      release();
      return { ok: false, error: new FuseeError("the step was abandoned while it waited for a permit"), attempts: attempt - 1 };
    }
    try {
      const value = await attemptOnce(fn, seq, attempt, progress, timeoutMs, heartbeatMs, env, (p) => {
        progress = p;
      });
      release?.();
      return { ok: true, value, attempts: attempt };
    } catch (error) {
      release?.();
      const delay = retry.delayAfter(attempt, error);
      if (delay === undefined || env.abandoned()) return { ok: false, error, attempts: attempt };
      await new Promise<void>((resolve) => env.clock.schedule(delay, resolve));
      if (env.abandoned()) return { ok: false, error, attempts: attempt };
    }
  }
}

function attemptOnce(
  fn: () => unknown,
  seq: number,
  attempt: number,
  progress: unknown,
  timeoutMs: number | undefined,
  heartbeatMs: number | undefined,
  env: StepEnvironment,
  keepProgress: (p: unknown) => void,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let timers: ClockTimer[] | undefined;
    let settled = false;
    let lastBeat = heartbeatMs === undefined ? 0 : env.clock.now();
    const finish = (ok: boolean, v: unknown): void => {
      if (settled) return;
      settled = true;
      if (timers !== undefined) for (const t of timers) t.cancel();
      if (ok) resolve(v);
      else reject(v);
    };
    const scope: StepScope = {
      get key() {
        return env.stepKey(seq);
      },
      attempt,
      get progress() {
        return progress;
      },
      heartbeat(p: unknown) {
        if (settled) return;
        progress = p;
        lastBeat = env.clock.now();
        keepProgress(p);
        env.onHeartbeat(seq, p);
      },
    };
    if (timeoutMs !== undefined) {
      (timers ??= []).push(env.clock.schedule(timeoutMs, () => finish(false, new TimeoutError(`step attempt ${attempt} ran past its timeout of ${timeoutMs}ms`))));
    }
    if (heartbeatMs !== undefined) {
      const watch = (delay: number): void => {
        (timers ??= []).push(
          env.clock.schedule(delay, () => {
            const quiet = env.clock.now() - lastBeat;
            if (quiet >= heartbeatMs) {
              finish(false, new TimeoutError(`step attempt ${attempt} sent no heartbeat for ${quiet}ms (heartbeatTimeout ${heartbeatMs}ms)`));
            } else watch(heartbeatMs - quiet);
          }),
        );
      };
      watch(heartbeatMs);
    }
    try {
      Promise.resolve(stepScope.run(scope, fn)).then(
        (v) => finish(true, v),
        (e: unknown) => finish(false, e),
      );
    } catch (e) {
      finish(false, e);
    }
  });
}
