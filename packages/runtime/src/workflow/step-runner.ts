import type { Clock, ClockTimer } from "../core/clock.js";
import { toMillis } from "../core/duration.js";
import { FuseeError, TimeoutError } from "../core/errors.js";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry-policy.js";
import { stepScope, type StepScope } from "./run-binding.js";
import type { StepOptions } from "./step-options.js";

/** Releases a permit of a limit; calling it again does nothing. */
export type Release = () => void;

/** A step attempt's place in a limit's queue: the permit once granted, or a way to give the place up. */
export interface PermitRequest {
  readonly granted: Promise<Release>;
  /** Leaves the queue; the permit is never granted. */
  withdraw(): void;
  /**
   * A permit shared with other processes can run out while the attempt holds it (its process was
   * paused past its expiry): `listener` is then called, and the attempt is stopped.
   */
  onLost?(listener: (reason: Error) => void): void;
  /** Why the granted permit no longer holds (it ran out), checked at once; undefined while it holds. */
  lapsed?(): Error | undefined;
}

/**
 * Watches one attempt of a step as it runs: `run` calls the attempt's code (in a trace context of
 * its own, say), `end` tells its outcome once, whether the code returned, threw or timed out.
 */
export interface AttemptObserver {
  run<T>(fn: () => T): T;
  end(ok: boolean, outcome: unknown): void;
}

/** The failed attempts of a step call that are in its run's journal. */
export interface AttemptHistory {
  /** Attempts that failed, so the next is `failed + 1`. */
  readonly failed: number;
  /** When the next attempt is due (ms since the epoch). */
  readonly retryAt: number;
  readonly lastError: Error;
  /** When the first attempt began, and when the last failure was journaled (ms since the epoch). */
  readonly since: number;
  readonly failedAt: number;
}

/**
 * What a step's attempts need from the run that calls the step (call `seq`). One environment
 * serves every step of a run, so starting a step allocates no closures for it.
 */
export interface StepEnvironment {
  /** The run the step belongs to: its attempts' scopes answer for that run alone (see `scopeOf`). */
  readonly owner: object;
  readonly clock: Clock;
  /** The idempotency key of call `seq`: the same for every attempt of the call. */
  stepKey(seq: number): string;
  /** Progress left by an earlier attempt's heartbeat. */
  stepProgress(seq: number): unknown;
  /** The failed attempts of call `seq` journaled so far (by this process or an earlier one). */
  stepHistory(seq: number): AttemptHistory | undefined;
  onHeartbeat(seq: number, progress: unknown): void;
  /** True once nothing the step does can be recorded any more (the engine shut down). */
  abandoned(): boolean;
  /**
   * Queues for a permit of the step's limit before each attempt; `undefined` when the step has no
   * limit. The permit is released when the attempt ends, before any backoff.
   */
  acquire(options: StepOptions): PermitRequest | undefined;
  /**
   * Journals failed attempt `attempt` of call `seq`, to be retried at `retryAt`, and calls
   * `recorded` once that record is durable: the next attempt starts no sooner, so a crash never
   * loses an attempt the retry budget counted.
   */
  attemptFailed(seq: number, name: string, attempt: number, error: unknown, retryAt: number, since: number, recorded: () => void): void;
  /**
   * Takes the outcome of all attempts of call `seq`: its value when `ok`, else its last error.
   * `attempts` counts the attempts that ran.
   */
  stepSettled(seq: number, name: string, ok: boolean, outcome: unknown, attempts: number): void;
  /** An observer of attempt `attempt` of call `seq`, when something watches steps. */
  observeAttempt?(seq: number, name: string, attempt: number): AttemptObserver | undefined;
}

/** A step call in flight, as its run holds it. */
export interface RunningStep {
  /** True while an attempt's code runs (not while the call waits for a permit or a retry). */
  readonly active: boolean;
  /**
   * Stops the call: the running attempt's `ctx.abortSignal` fires and its `ctx.heartbeat()` throws
   * `reason`; no attempt starts after it. A call waiting for a permit or a retry ends at once,
   * failed with `reason`.
   */
  abort(reason: Error): void;
}

/**
 * Runs the attempts of step call `seq` and reports their outcome to `env.stepSettled`: each attempt
 * in its own async scope (for `ctx.key()`, `ctx.attempt()`, `ctx.heartbeat()`, `ctx.abortSignal`),
 * bounded by its timeouts, retried by its policy from where the journal left off. Delays and
 * timeouts use the engine's clock, so a virtual clock drives them in tests.
 *
 * Every step of every run passes through here, so an attempt costs one promise reaction and no
 * promise of its own; the outcome is always reported on a later microtask, never during the call.
 */
export function runStep(fn: () => unknown, options: StepOptions, env: StepEnvironment, seq: number, name: string): RunningStep {
  const call = new StepCall(fn, options, env, seq, name);
  call.begin();
  return call;
}

/**
 * What only some step calls need: a limit's permit, timeouts, an observer, an abort. Kept apart so
 * the call every step makes stays small (it is allocated per step, on the hot path).
 */
class StepExtras {
  /** Why the whole call was aborted (cancel, terminate, shutdown). */
  aborted: Error | undefined = undefined;
  permit: PermitRequest | undefined = undefined;
  /** The permit the running attempt holds, when its limit is shared with other processes. */
  held: PermitRequest | undefined = undefined;
  /** What the running attempt's code returned, until the attempt ends; kept only while a permit is held. */
  body: Promise<unknown> | undefined = undefined;
  release: Release | undefined = undefined;
  timers: ClockTimer[] | undefined = undefined;
  /** The back-off before the next attempt, while it runs. */
  waiting: ClockTimer | undefined = undefined;
  /** Watches the running attempt, when something watches steps. */
  observer: AttemptObserver | undefined = undefined;
}

/** One step call across its attempts. */
class StepCall implements RunningStep {
  /** The attempt running or last begun (1-based). */
  attempt = 0;
  /** True while the current attempt runs and has not ended. */
  running = false;
  progress: unknown;
  lastBeat = 0;
  /** Attempts that ran to an end, counted in the step record. */
  private ran = 0;
  /** Set once the outcome was reported: nothing happens after it. */
  private done = false;
  private scope: AttemptScope | undefined = undefined;
  /** Made on first use: permits, timeouts, observers, aborts (see {@link StepExtras}). */
  private extras: StepExtras | undefined = undefined;
  /** When the first attempt began, on the engine's clock: a policy's total-time bound counts from it. */
  private since = 0;

  constructor(
    private readonly fn: () => unknown,
    private readonly options: StepOptions,
    readonly env: StepEnvironment,
    readonly seq: number,
    private readonly name: string,
  ) {
    this.progress = env.stepProgress(seq);
  }

  private get more(): StepExtras {
    return (this.extras ??= new StepExtras());
  }

  private get aborted(): Error | undefined {
    return this.extras?.aborted;
  }

  /** Starts the first attempt, or goes on from the attempts an earlier process journaled. */
  begin(): void {
    const history = this.env.stepHistory(this.seq);
    if (history === undefined) {
      this.since = this.env.clock.now();
      return this.next();
    }
    this.attempt = this.ran = history.failed;
    this.since = history.since;
    if (this.policy().delayAfter(history.failed, history.lastError, history.failedAt - history.since) === undefined) {
      return this.report(false, history.lastError, history.failed);
    }
    this.retryAt(history.retryAt);
  }

  get active(): boolean {
    return this.running;
  }

  abort(reason: Error): void {
    if (this.done || this.aborted !== undefined) return;
    const more = this.more;
    more.aborted = reason;
    // A running attempt is told and ends on its own; its outcome is then reported, without a retry.
    if (this.running) return this.scope?.abort(reason);
    more.permit?.withdraw();
    more.permit = undefined;
    more.waiting?.cancel();
    more.waiting = undefined;
    this.report(false, reason, this.ran);
  }

  /** Starts the next attempt once the step's limit (if any) grants a permit. */
  private next(): void {
    const attempt = ++this.attempt;
    let request: PermitRequest | undefined;
    try {
      request = this.env.acquire(this.options);
    } catch (error) {
      // No permit can be had (the limit was never declared): the attempt does not run, nor retry.
      return this.report(false, error, this.ran);
    }
    if (request === undefined) return this.run(attempt);
    const more = this.more;
    more.permit = request;
    // The attempt fails like one that timed out, and its retry waits for a new permit.
    request.onLost?.((reason) => this.timedOut(attempt, reason));
    request.granted.then(
      (release) => {
        more.permit = undefined;
        if (this.done) return release();
        if (this.env.abandoned()) {
          release();
          return this.report(false, new FuseeError("the step was abandoned while it waited for a permit"), this.ran);
        }
        more.release = release;
        more.held = request;
        this.run(attempt);
      },
      (error: unknown) => {
        more.permit = undefined;
        if (!this.done) this.report(false, error, this.ran);
      },
    );
  }

  private run(attempt: number): void {
    // Checked at the last moment: the run's shard may have been lost (its lease ran out) since the
    // step was asked for, and another process may already be running this step.
    if (this.env.abandoned()) return this.report(false, new FuseeError("the step was abandoned before its attempt started"), this.ran);
    this.running = true;
    const scope = new AttemptScope(this, attempt);
    this.scope = scope;
    const options = this.options;
    if (options.timeout !== undefined) {
      const ms = toMillis(options.timeout);
      (this.more.timers ??= []).push(
        this.env.clock.schedule(ms, () =>
          this.timedOut(attempt, new TimeoutError(`step attempt ${attempt} ran past its timeout of ${ms}ms`)),
        ),
      );
    }
    if (options.heartbeatTimeout !== undefined) {
      this.lastBeat = this.env.clock.now();
      this.watchHeartbeat(attempt, toMillis(options.heartbeatTimeout));
    }
    let result: unknown;
    const observer = this.env.observeAttempt?.(this.seq, this.name, attempt);
    if (observer !== undefined) this.more.observer = observer;
    try {
      result = observer === undefined ? stepScope.run(scope, this.fn) : observer.run(() => stepScope.run(scope, this.fn));
    } catch (error) {
      result = Promise.reject(error);
    }
    const body = Promise.resolve(result);
    // Only a held permit needs the body once the attempt ended (see `end`).
    if (this.extras?.release !== undefined) this.extras.body = body;
    body.then(
      (value) => this.end(attempt, true, value),
      (error: unknown) => this.end(attempt, false, error),
    );
  }

  private watchHeartbeat(attempt: number, delay: number): void {
    const limit = toMillis(this.options.heartbeatTimeout as NonNullable<StepOptions["heartbeatTimeout"]>);
    (this.more.timers ??= []).push(
      this.env.clock.schedule(delay, () => {
        if (attempt !== this.attempt || !this.running) return;
        const quiet = this.env.clock.now() - this.lastBeat;
        if (quiet >= limit) {
          this.timedOut(
            attempt,
            new TimeoutError(`step attempt ${attempt} sent no heartbeat for ${quiet}ms (heartbeatTimeout ${limit}ms)`),
          );
        } else this.watchHeartbeat(attempt, limit - quiet);
      }),
    );
  }

  /** The attempt is stale: its code may go on, but it is told (abort signal, heartbeats) and its outcome is ignored. */
  private timedOut(attempt: number, error: Error): void {
    if (attempt !== this.attempt || !this.running) return;
    this.scope?.abort(error);
    this.end(attempt, false, error);
  }

  /** The attempt's outcome; later outcomes of the same attempt (a timeout racing the code) are ignored. */
  private end(attempt: number, ok: boolean, outcome: unknown): void {
    if (attempt !== this.attempt || !this.running) return;
    this.running = false;
    this.ran = attempt;
    const more = this.extras;
    if (more !== undefined) this.endExtras(more, ok, outcome);
    if (ok || this.aborted !== undefined || this.env.abandoned()) return this.report(ok, outcome, attempt);
    const delay = this.policy().delayAfter(attempt, outcome, this.env.clock.now() - this.since);
    if (delay === undefined) return this.report(false, outcome, attempt);
    const retryAt = this.env.clock.now() + delay;
    try {
      this.env.attemptFailed(this.seq, this.name, attempt, outcome, retryAt, this.since, () => this.retryAt(retryAt));
    } catch {
      // The failure cannot be journaled (the engine refuses the record): the step ends with it.
      this.report(false, outcome, attempt);
    }
  }

  /** Tells the observer, stops the timers and gives back the permit of the attempt that ended. */
  private endExtras(more: StepExtras, ok: boolean, outcome: unknown): void {
    if (more.observer !== undefined) {
      more.observer.end(ok, outcome);
      more.observer = undefined;
    }
    if (more.timers !== undefined) {
      for (const t of more.timers) t.cancel();
      more.timers = undefined;
    }
    const release = more.release;
    more.release = undefined;
    more.held = undefined;
    if (release !== undefined) {
      // An attempt that timed out may still run: its permit is given back only once its code
      // returns, so a limit bounds the bodies that run, not only the attempts that count.
      const body = more.body;
      more.body = undefined;
      if (body === undefined) release();
      else void body.then(release, release);
    }
  }

  /** Backs off until `at` (a time on the engine's clock), then starts the next attempt. */
  private retryAt(at: number): void {
    if (this.done || this.aborted !== undefined) return;
    const more = this.more;
    more.waiting = this.env.clock.schedule(Math.max(0, at - this.env.clock.now()), () => {
      more.waiting = undefined;
      if (this.done) return;
      if (this.env.abandoned()) this.report(false, new FuseeError("the step was abandoned while it waited to retry"), this.ran);
      else this.next();
    });
  }

  /**
   * Throws (and stops the attempt) when the attempt may no longer go on: its permit ran out, or its
   * run's shard is no longer this process's. Called at each heartbeat, so a step that heartbeats
   * before each effect learns of it before the effect, even right after its process was paused.
   */
  checkHeld(attempt: number): void {
    const lost =
      this.extras?.held?.lapsed?.() ??
      (this.env.abandoned()
        ? new FuseeError("the step's run can no longer be recorded here: its shard moved to another process or the engine shut down")
        : undefined);
    if (lost === undefined) return;
    this.timedOut(attempt, lost);
    throw lost;
  }

  private policy(): RetryPolicy {
    return this.options.retry ?? DEFAULT_RETRY;
  }

  private report(ok: boolean, outcome: unknown, attempts: number): void {
    if (this.done) return;
    this.done = true;
    this.env.stepSettled(this.seq, this.name, ok, outcome, attempts);
  }
}

/** What one attempt's code sees through `ctx`; an attempt that ended no longer heartbeats. */
class AttemptScope implements StepScope {
  private controller: AbortController | undefined = undefined;
  private reason: Error | undefined = undefined;

  constructor(
    private readonly call: StepCall,
    readonly attempt: number,
  ) {}

  get owner(): object {
    return this.call.env.owner;
  }

  get key(): string {
    return this.call.env.stepKey(this.call.seq);
  }

  get progress(): unknown {
    return this.call.progress;
  }

  // Made on first use: most steps never look at their signal, and every step would pay for it.
  get abortSignal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }

  heartbeat(progress: unknown): void {
    if (this.reason !== undefined) throw this.reason;
    const call = this.call;
    if (call.attempt !== this.attempt || !call.running) return;
    call.checkHeld(this.attempt);
    call.progress = progress;
    call.lastBeat = call.env.clock.now();
    call.env.onHeartbeat(call.seq, progress);
  }
}
