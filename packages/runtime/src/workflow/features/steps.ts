import { buildInstance } from "../../codec/class-bridge.js";
import { CancelledError } from "../../core/errors.js";
import type { StepDefinition } from "../registry.js";
import { InlineFirstMap } from "../../core/inline-first-map.js";
import type { Clock } from "../../core/clock.js";
import {
  runStep,
  type AttemptHistory,
  type AttemptObserver,
  type PermitRequest,
  type RunningStep,
  type StepEnvironment,
} from "../step-runner.js";
import type { StepOptions } from "../step-options.js";
import {
  asError,
  type CancelledSteps,
  type KeyNaming,
  type Pending,
  type RecordAppliers,
  type RecordOf,
  type RunCursor,
} from "./run-cursor.js";

function noop(): void {}

/**
 * Steps: each call runs its attempts in this process (see `step-runner.ts`) unless the journal
 * answers it; failed attempts and heartbeats are journaled so retries go on from them after a restart.
 */
export class Steps implements StepEnvironment {
  /** Step calls executing in this process, to abort them. */
  private running: InlineFirstMap<RunningStep> | undefined = undefined;
  /** Failed attempts journaled per step call, so retries go on from them after a restart. */
  private attempts: Map<number, AttemptHistory> | undefined = undefined;
  /** Step calls whose failed attempt is being journaled, told once it is durable. */
  private attemptWaiters: Map<number, () => void> | undefined = undefined;
  /** Heartbeat progress by step call, once a step sent one. */
  private progress: Map<number, unknown> | undefined = undefined;
  /** `@Step({ type })` classes by step name, read from the definition once a step applies. */
  private resultTypes: Map<string, new (...args: never[]) => unknown> | undefined = undefined;
  /** Argument fingerprints of step calls made live, journaled with their results. */
  private argsBySeq: Map<number, string> | undefined = undefined;
  /** Step calls executed live whose record has not applied yet. */
  inFlight = 0;
  /** Where `keepResolvers` leaves the resolvers of the promise just made (see `step`). */
  private readonly kept: Pending = { resolve: noop, reject: noop };
  private readonly keepResolvers = (resolve: (value: unknown) => void, reject: (error: unknown) => void): void => {
    this.kept.resolve = resolve;
    this.kept.reject = reject;
  };

  constructor(private readonly run: RunCursor & { readonly cancellation: CancelledSteps; readonly lifecycle: KeyNaming }) {}

  step(name: string, fn: () => unknown, options: StepOptions, args?: string): Promise<unknown> {
    const run = this.run;
    const seq = run.call("step", name, args);
    // A step called once the run was cancelled does not run: the code learns of the cancellation here.
    const cancelled = run.cancellation.take();
    if (cancelled !== undefined) return Promise.reject(cancelled);
    // One executor function per run hands the resolvers over, so a step makes no closure for them.
    const promise = new Promise<unknown>(this.keepResolvers);
    const pending: Pending = { resolve: this.kept.resolve, reject: this.kept.reject, step: true };
    run.pending.set(seq, pending);
    if (run.recorded(seq)) return promise;
    if (args !== undefined) (this.argsBySeq ??= new Map()).set(seq, args);
    try {
      // Most steps run live: only a replay holds them, so only then is a closure made.
      if (run.replaying) run.whenLive(() => this.execute(seq, name, fn, options));
      else this.execute(seq, name, fn, options);
    } catch (e) {
      pending.reject(e);
    }
    return promise;
  }

  private execute(seq: number, name: string, fn: () => unknown, options: StepOptions): void {
    const host = this.run.host;
    if (host.skipStep !== undefined) return host.skipStep(seq, name);
    this.inFlight++;
    const cancelled = this.run.cancellation.stopsStep(seq);
    if (cancelled !== undefined) {
      // The run was cancelled while this call was in flight in an earlier process: no attempt starts.
      const attempts = this.attempts?.get(seq)?.failed ?? 0;
      queueMicrotask(() => this.stepSettled(seq, name, false, cancelled, attempts));
      return;
    }
    (this.running ??= new InlineFirstMap()).set(seq, runStep(fn, options, this, seq, name));
  }

  /** True while step calls are in flight in this process. */
  get any(): boolean {
    return (this.running?.size ?? 0) > 0;
  }

  /** True while an attempt's code runs (not only backs off or waits for a permit). */
  active(): boolean {
    if (this.running === undefined || this.running.size === 0) return false;
    let active = false;
    this.running.forEach((step) => {
      if (step.active) active = true;
    });
    return active;
  }

  /** Aborts every step call running in this process. */
  abort(reason: Error): void {
    if (this.running === undefined || this.running.size === 0) return;
    const running: RunningStep[] = [];
    this.running.forEach((step) => running.push(step));
    for (const step of running) step.abort(reason);
  }

  applyStep(record: RecordOf<"step">, replayed: boolean): void {
    const run = this.run;
    const p = run.pending.take(record.seq);
    if (!replayed) this.inFlight--;
    this.attempts?.delete(record.seq);
    if (record.ok) p?.resolve(this.typed(record.name, record.value));
    else if (run.cancellation.claimsFailure(record.seq)) {
      p?.reject(
        new CancelledError(`step '${record.name}' of ${run.workflowId} was cancelled: ${record.error?.message ?? "it failed"}`, {
          cause: record.error,
        }),
      );
    } else p?.reject(record.error);
  }

  /**
   * A step's result as its `@Step({ type })` class, whatever the journal held: a value recorded as a
   * plain object (by code from before the class, or a step that returned a literal) gets the class's
   * methods too, as the option promises.
   */
  private typed(name: string, value: unknown): unknown {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
    const types = (this.resultTypes ??= resultTypesOf(this.run.definition.steps.values()));
    const cls = types.get(name);
    if (cls === undefined || value instanceof cls) return value;
    return buildInstance(cls, value as Record<string, unknown>);
  }

  applyAttempt(record: RecordOf<"attempt">, replayed: boolean): void {
    const since = record.since ?? this.attempts?.get(record.seq)?.since ?? record.at;
    (this.attempts ??= new Map()).set(record.seq, {
      failed: record.attempt,
      retryAt: record.retryAt,
      lastError: record.error,
      since,
      failedAt: record.at,
    });
    const recorded = this.attemptWaiters?.get(record.seq);
    if (recorded !== undefined && !replayed) {
      this.attemptWaiters?.delete(record.seq);
      recorded();
    }
  }

  applyHeartbeat(record: RecordOf<"heartbeat">): void {
    (this.progress ??= new Map()).set(record.seq, record.progress);
  }

  // ---- StepEnvironment ----

  /** Step scopes belong to the run: `ctx` and `@Step` methods find theirs by the executor. */
  get owner(): object {
    return this.run;
  }

  get clock(): Clock {
    return this.run.host.clock;
  }

  stepKey(seq: number): string {
    return `${this.run.lifecycle.keyPrefix}:${seq}`;
  }

  stepProgress(seq: number): unknown {
    return this.progress?.get(seq);
  }

  stepHistory(seq: number): AttemptHistory | undefined {
    return this.attempts?.get(seq);
  }

  attemptFailed(seq: number, name: string, attempt: number, error: unknown, retryAt: number, since: number, recorded: () => void): void {
    const { host, broken, finished } = this.run;
    if (host.closed() || broken || finished) return;
    (this.attemptWaiters ??= new Map()).set(seq, recorded);
    try {
      host.append({ kind: "attempt", seq, name, attempt, retryAt, since, error: asError(error), at: host.clock.now() });
    } catch (e) {
      this.attemptWaiters.delete(seq);
      throw e;
    }
  }

  onHeartbeat(seq: number, progress: unknown): void {
    (this.progress ??= new Map()).set(seq, progress);
    const { host, broken } = this.run;
    if (!host.closed() && !broken) host.append({ kind: "heartbeat", seq, progress, at: host.clock.now() });
  }

  abandoned(): boolean {
    return this.run.host.closed();
  }

  acquire(options: StepOptions): PermitRequest | undefined {
    return this.run.host.acquire?.(options);
  }

  observeAttempt(_seq: number, name: string, attempt: number): AttemptObserver | undefined {
    return this.run.host.observeAttempt?.(name, attempt);
  }

  stepSettled(seq: number, name: string, ok: boolean, outcome: unknown, attempts: number): void {
    this.running?.take(seq);
    const { host, broken, finished } = this.run;
    if (host.closed() || broken || finished) return;
    const at = host.clock.now();
    let args: string | undefined;
    if (this.argsBySeq !== undefined) {
      args = this.argsBySeq.get(seq);
      this.argsBySeq.delete(seq);
    }
    try {
      // Literals of one shape each, without a spread: every step makes one of these records.
      host.append(
        args === undefined
          ? ok
            ? { kind: "step", seq, name, attempts, at, ok: true, value: outcome }
            : { kind: "step", seq, name, attempts, at, ok: false, error: asError(outcome) }
          : ok
            ? { kind: "step", seq, name, attempts, at, ok: true, value: outcome, args }
            : { kind: "step", seq, name, attempts, at, ok: false, error: asError(outcome), args },
      );
    } catch (encodeError) {
      // A result that cannot be journaled fails the step rather than the engine.
      const error = asError(encodeError);
      this.run.recordOrBreak(
        args === undefined
          ? { kind: "step", seq, name, attempts, at, ok: false, error }
          : { kind: "step", seq, name, attempts, at, ok: false, error, args },
      );
    }
  }
}

function resultTypesOf(steps: Iterable<StepDefinition>): Map<string, new (...args: never[]) => unknown> {
  const types = new Map<string, new (...args: never[]) => unknown>();
  for (const s of steps) if (s.options.type !== undefined) types.set(s.name, s.options.type as new (...args: never[]) => unknown);
  return types;
}

export const stepRecords: RecordAppliers<"step" | "attempt" | "heartbeat", { readonly steps: Steps }> = {
  step: (run, record, replayed) => run.steps.applyStep(record, replayed),
  attempt: (run, record, replayed) => run.steps.applyAttempt(record, replayed),
  heartbeat: (run, record) => run.steps.applyHeartbeat(record),
};
