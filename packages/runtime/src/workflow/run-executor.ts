import type { DependencyContainer } from "tsyringe";
import type { Clock } from "../core/clock.js";
import { DeterministicRandom } from "../core/deterministic-random.js";
import { CancelledError, ConfigError, FuseeError, NonDeterminismError, RejectedError, TerminatedError, TimeoutError } from "../core/errors.js";
import { InlineFirstMap } from "../core/inline-first-map.js";
import { describeRecord, isCallRecord, type CallRecord, type ChildResultRecord, type CompletionRecord, type JournalRecord } from "../core/records.js";
import type { FinishedStatus } from "../core/status.js";
import { Ctx, type ChildHandle, type ChildOptions, type CtxBackend } from "./ctx.js";
import { explainMissingTypeInfo } from "./injection-diagnosis.js";
import { unknownHandler, type WorkflowDefinition } from "./registry.js";
import { bindInstance, outsideSteps, scopeOf, type StepHost } from "./run-binding.js";
import { makeCompletionToken } from "./completion-token.js";
import { runStep, type AttemptHistory, type PermitRequest, type RunningStep, type StepEnvironment } from "./step-runner.js";
import type { StepOptions } from "./step-options.js";

/** What an executor needs from the engine that hosts its run. */
export interface RunHost {
  readonly workflowId: string;
  readonly runId: number;
  readonly clock: Clock;
  /**
   * Appends a record to the run's journal; once durable it comes back through `deliver`. Throws
   * synchronously when the record cannot be encoded or is too large.
   */
  append(record: JournalRecord): void;
  /** The timer set by call `seq` is no longer needed. */
  cancelTimer(seq: number): void;
  /** True once the engine shut down: results can no longer be recorded. */
  closed(): boolean;
  /** The executor's state changed (idle, finished, broken): the engine may update its index. */
  changed(): void;
  /**
   * A permit of the step's limit (`StepOptions.limit`), awaited before each attempt of the step and
   * released when the attempt ends, so a step backing off between retries holds none; `undefined`
   * when the step names no limit.
   */
  acquire?(options: StepOptions): PermitRequest | undefined;
  /** Starts a child run for call `seq`; the engine journals a `child` record with the outcome. */
  startChild(request: ChildRequest): void;
  /** Ends this run and starts a fresh one of the same ID with `input`. */
  continueAsNew(input: unknown): void;
  /** Applies a close policy to a child whose wait timed out. */
  closeChild(childId: string, reason: string): void;
  /**
   * When present, steps never run: a step the journal does not answer is reported here and stays
   * pending. A replay check sets it, because checking code against a journal must have no effects.
   */
  skipStep?(seq: number, name: string): void;
}

/** What `ctx.startChild` asks the engine to start. */
export interface ChildRequest {
  readonly seq: number;
  readonly type: string;
  readonly id: string;
  readonly input: unknown;
  readonly close: NonNullable<ChildOptions["close"]>;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Set for a step call: a cancellation reaches the calls of steps that have not answered. */
  readonly step?: true;
}

function noop(): void {}

interface Condition {
  readonly pred: () => boolean;
  readonly resolve: (ok: boolean) => void;
  timerSeq?: number;
}

interface Waiter {
  readonly resolve: (value: unknown) => void;
  timerSeq?: number;
}

/** A wait of the workflow code that a cancellation interrupts. */
type Interruptible = (error: CancelledError) => void;

type UpdateOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Runs whose code is settling after a record; each goes on once every microtask of this turn ran. */
let settling: RunExecutor[] = [];
let turnArmed = false;

/**
 * Lets every microtask of the workflow code run before the executor's next record applies. All runs
 * waiting in one turn of the event loop share one `setImmediate`, and none holds a promise for it.
 */
function afterTurn(executor: RunExecutor): void {
  settling.push(executor);
  if (turnArmed) return;
  turnArmed = true;
  setImmediate(nextTurn);
}

function nextTurn(): void {
  turnArmed = false;
  const ready = settling;
  settling = [];
  outsideSteps(ready, settleAll);
}

function settleAll(this: readonly RunExecutor[]): void {
  for (const executor of this) {
    try {
      executor.settled();
    } catch (e) {
      // One run's failure must not hold up the others; it still surfaces as an uncaught error.
      queueMicrotask(() => {
        throw e;
      });
    }
  }
}

/**
 * Runs one workflow run by applying its journal, record by record, to fresh workflow code.
 *
 * Replay and live execution are one mechanism: records (replayed from the log, or just made durable)
 * are applied strictly in journal order, and the workflow code settles between two records, so
 * handlers apply at the same points on every replay. Calls the code makes are numbered; while
 * replaying, each call is answered from (and checked against) the record with its number, and calls
 * the journal does not answer yet are held until the replay is done, then executed.
 */
export class RunExecutor implements CtxBackend, StepHost, StepEnvironment {
  private instance: Record<string, any> | undefined;
  private random_: DeterministicRandom | undefined;
  private lastAt = 0;
  private seq = 0;
  private applied = 0;
  private replayEnd = 0;
  private held: Array<() => void> | null = null;
  /** While replaying: the journal's call records by call number. */
  private replayCalls: Map<number, { record: CallRecord; position: number }> | undefined;
  private replayHasFinish = false;
  private replayUpdateResults: Set<string> | undefined;
  private readonly arrived = new InlineFirstMap<JournalRecord>();
  private readonly pending = new InlineFirstMap<Pending>();
  /** Where `keepResolvers` leaves the resolvers of the promise just made (see `step`). */
  private readonly kept: Pending = { resolve: noop, reject: noop };
  private readonly keepResolvers = (resolve: (value: unknown) => void, reject: (error: unknown) => void): void => {
    this.kept.resolve = resolve;
    this.kept.reject = reject;
  };
  private mailbox: Map<string, unknown[]> | undefined;
  private waiters: Map<string, Waiter[]> | undefined;
  private conditions: Set<Condition> | undefined;
  private updateResults: Map<string, UpdateOutcome> | undefined;
  private acceptedUpdates: Set<string> | undefined;
  private idleWaiters: Array<() => void> | undefined;
  /** Heartbeat progress by step call, once a step sent one. */
  private progress: Map<number, unknown> | undefined;
  private waits: Set<Interruptible> | undefined;
  /** A cancellation no code has been told of yet: the next wait, step call or the body's end gets it. */
  private cancelPending: CancelledError | undefined;
  /** Step calls that had not answered when the run was cancelled: a failure of theirs is the cancellation. */
  private cancelledSteps: Set<number> | undefined;
  /** Step calls executing in this process, to abort them. */
  private runningSteps: InlineFirstMap<RunningStep> | undefined;
  /** Failed attempts journaled per step call, so retries go on from them after a restart. */
  private attempts: Map<number, AttemptHistory> | undefined;
  /** Step calls whose failed attempt is being journaled, told once it is durable. */
  private attemptWaiters: Map<number, () => void> | undefined;
  private issuedTokens: Set<string> | undefined;
  private completions: Map<string, CompletionRecord> | undefined;
  private completionWaiters: Map<string, (r: CompletionRecord) => void> | undefined;
  private childResults: Map<number, ChildResultRecord> | undefined;
  private childWaiters: Map<number, Array<(r: ChildResultRecord | Error) => void>> | undefined;
  private childTimeouts: Map<number, number> | undefined;
  private continued = false;
  /** The cancellation that aborts steps the run executes after it (held during a replay). */
  private cancelAbort: CancelledError | undefined;
  private driving = false;
  private inFlight = 0;
  private bodyDone = false;
  /** The latest call of the code, for determinism errors. */
  private lastKind: CallRecord["kind"] | undefined;
  private lastName: string | undefined;
  private lastSeq = 0;
  /** Set when the code and the journal disagree, or the workflow cannot be instantiated. */
  broken: Error | undefined;
  finished: FinishedStatus | undefined;

  constructor(
    readonly definition: WorkflowDefinition,
    private readonly container: DependencyContainer,
    private readonly host: RunHost,
  ) {}

  get workflowId(): string {
    return this.host.workflowId;
  }

  get workflowType(): string {
    return this.definition.name;
  }

  /** Starts applying `records` (the durable journal so far) as a replay. */
  load(records: readonly JournalRecord[]): void {
    this.replayEnd = records.length;
    if (records.length > 0) this.held = [];
    records.forEach((record, position) => {
      if (isCallRecord(record)) (this.replayCalls ??= new Map()).set(record.seq, { record, position });
      if (record.kind === "finish") this.replayHasFinish = true;
      if (record.kind === "update-result") (this.replayUpdateResults ??= new Set()).add(record.id);
      this.arrived.set(position, record);
    });
    this.drive();
  }

  /** Hands over a record that just became durable at `position` of the journal. */
  deliver(position: number, record: JournalRecord): void {
    if (position < this.applied) return;
    this.arrived.set(position, record);
    if (!this.driving) this.drive();
  }

  /** `running` while anything is being applied or executed, `suspended` while only waiting. */
  status(): "running" | "suspended" | FinishedStatus {
    if (this.finished) return this.finished;
    if (this.instance === undefined || this.driving || this.inFlight > 0 || this.arrived.size > 0 || this.held !== null) return "running";
    return "suspended";
  }

  /** Resolves once every record delivered so far has been applied and the code has settled. */
  whenIdle(): Promise<void> {
    if (!this.driving && this.arrived.size === 0) return Promise.resolve();
    return new Promise((resolve) => (this.idleWaiters ??= []).push(resolve));
  }

  /** Answers a query from the run's current state. */
  query(name: string, args: readonly unknown[]): unknown {
    this.assertUsable();
    const method = this.definition.queries.get(name);
    if (method === undefined) throw unknownHandler("query", name, this.definition, this.workflowId);
    return (this.instance as Record<string, (...a: unknown[]) => unknown>)[method]!(...args);
  }

  /** Runs an update's validator; a throw becomes a `RejectedError` and nothing is recorded. */
  validateUpdate(name: string, arg: unknown): void {
    this.assertUsable();
    const update = this.definition.updates.get(name);
    if (update === undefined) throw unknownHandler("update", name, this.definition, this.workflowId);
    if (update.validate === undefined) return;
    try {
      update.validate.call(this.instance, arg);
    } catch (e) {
      if (e instanceof RejectedError) throw e;
      throw new RejectedError(`update '${name}' of ${this.definition.name} (ID ${this.workflowId}) was rejected: ${(e as Error)?.message ?? String(e)}`, { cause: e });
    }
  }

  /** The recorded outcome of update `id`, once its result record has been applied. */
  updateOutcome(id: string): UpdateOutcome | undefined {
    return this.updateResults?.get(id);
  }

  /** True when update `id` was accepted (journaled, or being journaled) by this run. */
  knowsUpdate(id: string): boolean {
    return this.acceptedUpdates?.has(id) === true;
  }

  /** Reserves update `id` before its record is appended, so a concurrent retry waits for it instead. */
  claimUpdate(id: string): void {
    (this.acceptedUpdates ??= new Set()).add(id);
  }

  // ---- CtxBackend ----

  runId(): number {
    return this.host.runId;
  }

  now(): number {
    return this.lastAt;
  }

  random(): number {
    return this.rng().next();
  }

  uuid(): string {
    return this.rng().uuid();
  }

  journalSize(): number {
    return this.applied;
  }

  step(name: string, fn: () => unknown, options: StepOptions): Promise<unknown> {
    const seq = this.call("step", name);
    // A step called once the run was cancelled does not run: the code learns of the cancellation here.
    const cancelled = this.takeCancellation();
    if (cancelled !== undefined) return Promise.reject(cancelled);
    // One executor function per run hands the resolvers over, so a step makes no closure for them.
    const promise = new Promise<unknown>(this.keepResolvers);
    const pending: Pending = { resolve: this.kept.resolve, reject: this.kept.reject, step: true };
    this.pending.set(seq, pending);
    if (this.replayCalls?.has(seq)) return promise;
    try {
      // Most steps run live: only a replay holds them, so only then is a closure made.
      if (this.held !== null) this.held.push(() => this.execute(seq, name, fn, options));
      else this.execute(seq, name, fn, options);
    } catch (e) {
      pending.reject(e);
    }
    return promise;
  }

  sleepUntil(until: number): Promise<void> {
    return this.interruptible<void>((resolve, onCancel) => {
      const seq = this.timer(until, () => resolve());
      onCancel(() => this.cancelTimer(seq));
    });
  }

  waitFor(name: string, timeoutMs: number | undefined): Promise<unknown> {
    const buffered = this.mailbox?.get(name);
    if (buffered !== undefined && buffered.length > 0) return Promise.resolve(buffered.shift());
    return this.interruptible((resolve, onCancel) => {
      const waiter: Waiter = { resolve };
      const list = this.waiters?.get(name) ?? [];
      list.push(waiter);
      (this.waiters ??= new Map()).set(name, list);
      const remove = (): void => {
        const l = this.waiters?.get(name);
        const i = l?.indexOf(waiter) ?? -1;
        if (i >= 0) l?.splice(i, 1);
      };
      if (timeoutMs !== undefined) {
        waiter.timerSeq = this.timer(this.lastAt + timeoutMs, () => {
          remove();
          resolve(undefined);
        });
      }
      onCancel(() => {
        remove();
        this.cancelTimer(waiter.timerSeq);
      });
    });
  }

  condition(pred: () => boolean, timeoutMs: number | undefined): Promise<boolean> {
    if (pred()) return Promise.resolve(true);
    return this.interruptible<boolean>((resolve, onCancel) => {
      const c: Condition = { pred, resolve };
      (this.conditions ??= new Set()).add(c);
      if (timeoutMs !== undefined) {
        c.timerSeq = this.timer(this.lastAt + timeoutMs, () => {
          this.conditions?.delete(c);
          resolve(false);
        });
      }
      onCancel(() => {
        this.conditions?.delete(c);
        this.cancelTimer(c.timerSeq);
      });
    });
  }

  awaitCompletion(name: string, send: (c: { token: string }) => unknown, options: StepOptions): Promise<unknown> {
    return (async () => {
      const token = (await this.step(
        name,
        async () => {
          const scope = scopeOf(this);
          const t = makeCompletionToken(this.workflowId, this.host.runId, scope?.key ?? name, scope?.attempt ?? 1);
          await send({ token: t });
          return t;
        },
        options,
      )) as string;
      (this.issuedTokens ??= new Set()).add(token);
      const done = this.completions?.get(token);
      const record =
        done ??
        (await this.interruptible<CompletionRecord>((resolve, onCancel) => {
          (this.completionWaiters ??= new Map()).set(token, resolve);
          onCancel(() => this.completionWaiters?.delete(token));
        }));
      if (record.ok) return record.value;
      throw record.error;
    })();
  }

  startChild(type: string, id: string, input: unknown, options: ChildOptions): Promise<ChildHandle<unknown>> {
    const seq = this.call("child", id);
    const close = options.close ?? "terminate";
    if (options.timeoutMs !== undefined) {
      const timerSeq = this.timer(this.lastAt + options.timeoutMs, () => this.childTimedOut(seq, id, options.timeoutMs as number));
      (this.childTimeouts ??= new Map()).set(seq, timerSeq);
    }
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve: () => resolve(this.childHandle(seq, id)), reject });
      if (!this.replayCalls?.has(seq)) this.whenLive(() => this.host.startChild({ seq, type, id, input, close }));
    });
  }

  continueAsNew(input: unknown): Promise<never> {
    if (!this.continued) {
      this.continued = true;
      this.bodyDone = true;
      this.whenLive(() => {
        if (!this.host.closed() && !this.broken) this.host.continueAsNew(input);
      });
    }
    return new Promise<never>(() => undefined);
  }

  /** Whether the result of the child started by call `seq` was journaled in this run. */
  hasChildResult(seq: number): boolean {
    return this.childResults?.has(seq) === true;
  }

  /** Whether `token` may complete: `open` once issued and unanswered. */
  completionState(token: string): "open" | "used" | "unknown" {
    if (this.completions?.has(token)) return "used";
    return this.issuedTokens?.has(token) ? "open" : "unknown";
  }

  /** Reserves `token` before its completion is appended, so a concurrent second answer is refused. */
  claimCompletion(token: string): void {
    this.issuedTokens?.delete(token);
    (this.completions ??= new Map()).set(token, { kind: "completion", token, ok: true, at: this.lastAt });
  }

  patched(id: string, deprecated: boolean): boolean {
    const declared = this.definition.patches;
    if (declared !== undefined && !declared.includes(id)) {
      throw new RejectedError(`patch '${id}' is not declared by workflow ${this.definition.name}; declare it in @Workflow({ patches: [...] })`);
    }
    const next = this.replayCalls?.get(this.seq + 1);
    if (next?.record.kind === "patch" && next.record.id === id) {
      this.seq++;
      return true;
    }
    if (deprecated || this.applied < this.replayEnd) return false;
    const seq = this.call("patch", id);
    this.whenLive(() => this.record({ kind: "patch", seq, id, at: this.host.clock.now() }));
    return true;
  }

  setAttributes(attributes: Record<string, unknown>): void {
    const seq = this.call("attributes", undefined);
    if (!this.replayCalls?.has(seq)) {
      this.whenLive(() => this.record({ kind: "attributes", seq, attributes: { ...attributes }, at: this.host.clock.now() }));
    }
  }

  // ---- StepEnvironment ----

  get clock(): Clock {
    return this.host.clock;
  }

  stepKey(seq: number): string {
    return `${this.workflowId}:${this.host.runId}:${seq}`;
  }

  stepProgress(seq: number): unknown {
    return this.progress?.get(seq);
  }

  stepHistory(seq: number): AttemptHistory | undefined {
    return this.attempts?.get(seq);
  }

  attemptFailed(seq: number, name: string, attempt: number, error: unknown, retryAt: number, recorded: () => void): void {
    if (this.host.closed() || this.broken || this.finished) return;
    (this.attemptWaiters ??= new Map()).set(seq, recorded);
    try {
      this.host.append({ kind: "attempt", seq, name, attempt, retryAt, error: asError(error), at: this.host.clock.now() });
    } catch (e) {
      this.attemptWaiters.delete(seq);
      throw e;
    }
  }

  onHeartbeat(seq: number, progress: unknown): void {
    (this.progress ??= new Map()).set(seq, progress);
    if (!this.host.closed() && !this.broken) this.host.append({ kind: "heartbeat", seq, progress, at: this.host.clock.now() });
  }

  abandoned(): boolean {
    return this.host.closed();
  }

  acquire(options: StepOptions): PermitRequest | undefined {
    return this.host.acquire?.(options);
  }

  stepSettled(seq: number, name: string, ok: boolean, outcome: unknown, attempts: number): void {
    this.runningSteps?.take(seq);
    if (this.host.closed() || this.broken || this.finished) return;
    const at = this.host.clock.now();
    try {
      this.host.append(
        ok ? { kind: "step", seq, name, attempts, at, ok: true, value: outcome } : { kind: "step", seq, name, attempts, at, ok: false, error: asError(outcome) },
      );
    } catch (encodeError) {
      // A result that cannot be journaled fails the step rather than the engine.
      this.recordOrBreak({ kind: "step", seq, name, attempts, at, ok: false, error: asError(encodeError) });
    }
  }

  // ---- internals ----

  /** A wait that a cancellation rejects with `CancelledError` (at once, when one is pending). */
  private interruptible<T>(body: (resolve: (v: T) => void, onCancel: (undo: () => void) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const cancelled = this.takeCancellation();
      if (cancelled !== undefined) {
        reject(cancelled);
        return;
      }
      let undo: () => void = () => undefined;
      const interrupt: Interruptible = (error) => {
        this.waits?.delete(interrupt);
        undo();
        reject(error);
      };
      (this.waits ??= new Set()).add(interrupt);
      body(
        (v) => {
          this.waits?.delete(interrupt);
          resolve(v);
        },
        (u) => {
          undo = u;
        },
      );
    });
  }

  private childHandle(seq: number, id: string): ChildHandle<unknown> {
    const outcome = (r: ChildResultRecord | Error): unknown => {
      if (r instanceof Error) throw r;
      if (r.status === "ok") return r.value;
      throw r.error;
    };
    return {
      id,
      // Waiting for a child is a wait like any other: a cancellation of this run interrupts it.
      result: () => {
        const done = this.childResults?.get(seq);
        if (done !== undefined) return new Promise((resolve) => resolve(outcome(done)));
        return this.interruptible<ChildResultRecord | Error>((resolve, onCancel) => {
          const list = this.childWaiters?.get(seq) ?? [];
          list.push(resolve);
          (this.childWaiters ??= new Map()).set(seq, list);
          onCancel(() => {
            const waiting = this.childWaiters?.get(seq);
            const i = waiting?.indexOf(resolve) ?? -1;
            if (i >= 0) waiting?.splice(i, 1);
          });
        }).then(outcome);
      },
    };
  }

  private childTimedOut(seq: number, id: string, ms: number): void {
    this.childTimeouts?.delete(seq);
    if (this.childResults?.has(seq)) return;
    const error = new TimeoutError(`child '${id}' of ${this.workflowId} did not finish within ${ms}ms`);
    (this.childResults ??= new Map()).set(seq, { kind: "child-result", seq, childId: id, status: "failed", error, at: this.lastAt });
    for (const w of this.childWaiters?.get(seq) ?? []) w(error);
    this.childWaiters?.delete(seq);
    if (this.held === null && !this.host.closed()) this.host.closeChild(id, `timed out after ${ms}ms`);
  }

  private rng(): DeterministicRandom {
    if (this.random_ === undefined) throw new FuseeError("the run has not started yet");
    return this.random_;
  }

  /** Numbers a call of the workflow code and, while replaying, checks it against the journal. */
  private call(kind: CallRecord["kind"], name: string | undefined): number {
    const seq = ++this.seq;
    this.lastKind = kind;
    this.lastName = name;
    this.lastSeq = seq;
    const recorded = this.replayCalls?.get(seq);
    if (recorded !== undefined) {
      const r = recorded.record;
      const recordedName = r.kind === "step" ? r.name : r.kind === "patch" ? r.id : r.kind === "child" ? r.childId : undefined;
      const same = r.kind === kind && recordedName === name;
      if (!same) {
        const error = this.nonDeterminism(recorded.position, describeRecord(r), this.lastCall());
        this.breakWith(error);
        throw error;
      }
    }
    return seq;
  }

  /** The code's latest call as determinism errors name it. */
  private lastCall(): string {
    const kind = this.lastKind;
    if (kind === undefined) return "nothing yet";
    return kind === "attributes" || kind === "timer" ? `${kind} (call #${this.lastSeq})` : `${kind} '${this.lastName}' (call #${this.lastSeq})`;
  }

  private nonDeterminism(position: number, holds: string, asked: string): NonDeterminismError {
    return new NonDeterminismError(
      `workflow ${this.definition.name} (ID ${this.workflowId}, run ${this.host.runId}) does not match its journal at position ${position}: ` +
        `the journal holds ${holds}, the code asked for ${asked}. Guard changed code paths with ctx.patched().`,
    );
  }

  private timer(until: number, onFire: () => void): number {
    const seq = this.call("timer", undefined);
    this.pending.set(seq, { resolve: onFire, reject: () => undefined });
    if (!this.replayCalls?.has(seq)) {
      this.whenLive(() => this.record({ kind: "timer", seq, until, at: this.host.clock.now() }));
    }
    return seq;
  }

  private cancelTimer(seq: number | undefined): void {
    if (seq === undefined) return;
    this.pending.take(seq);
    this.host.cancelTimer(seq);
  }

  private whenLive(action: () => void): void {
    if (this.held !== null) this.held.push(action);
    else action();
  }

  /**
   * Journals the failure that replaces an unjournalable outcome. When even that cannot be written
   * (the payload cipher refuses to seal anything more), the run stops here, broken with the reason,
   * instead of throwing where nothing would catch it.
   */
  private recordOrBreak(record: JournalRecord): void {
    try {
      this.record(record);
    } catch (e) {
      this.breakWith(asError(e));
    }
  }

  private record(record: JournalRecord): void {
    if (this.host.closed() || this.broken) return;
    this.host.append(record);
  }

  private execute(seq: number, name: string, fn: () => unknown, options: StepOptions): void {
    if (this.host.skipStep !== undefined) return this.host.skipStep(seq, name);
    this.inFlight++;
    const cancelled = this.cancelAbort;
    if (cancelled !== undefined && this.cancelledSteps?.has(seq) === true) {
      // The run was cancelled while this call was in flight in an earlier process: no attempt starts.
      const attempts = this.attempts?.get(seq)?.failed ?? 0;
      queueMicrotask(() => this.stepSettled(seq, name, false, cancelled, attempts));
      return;
    }
    (this.runningSteps ??= new InlineFirstMap()).set(seq, runStep(fn, options, this, seq, name));
  }

  /**
   * Whether the run has work it can do without time passing or anything arriving: records to apply,
   * code to settle, a replay under way, and (with `steps`) step attempts whose code runs.
   */
  busy(steps: boolean): boolean {
    if (this.broken !== undefined || this.finished !== undefined) return false;
    if (this.driving || this.arrived.size > 0 || this.held !== null || this.instance === undefined) return true;
    if (!steps || this.runningSteps === undefined || this.runningSteps.size === 0) return false;
    let active = false;
    this.runningSteps.forEach((step) => {
      if (step.active) active = true;
    });
    return active;
  }

  /** True while step calls of this executor are in flight. */
  get runsSteps(): boolean {
    return (this.runningSteps?.size ?? 0) > 0;
  }

  /**
   * Aborts every step call this executor runs: the run was cancelled or terminated, or can no longer
   * record their outcomes (the engine shuts down, the run was replaced or moved away).
   */
  abortSteps(reason: Error): void {
    if (this.runningSteps === undefined || this.runningSteps.size === 0) return;
    const running: RunningStep[] = [];
    this.runningSteps.forEach((step) => running.push(step));
    for (const step of running) step.abort(reason);
  }

  /** The cancellation not yet told to the code, taken so that it is told once. */
  private takeCancellation(): CancelledError | undefined {
    const error = this.cancelPending;
    this.cancelPending = undefined;
    return error;
  }

  private drive(): void {
    if (this.driving) return;
    this.driving = true;
    outsideSteps(this, this.applyNext);
  }

  /** Applies the next arrived record and waits a turn for the code to settle, or stops driving. */
  private applyNext(): void {
    let waiting = false;
    try {
      const record = this.arrived.get(this.applied);
      if (record === undefined || this.broken) return;
      this.arrived.take(this.applied);
      const position = this.applied++;
      const replayed = position < this.replayEnd;
      this.lastAt = record.at;
      this.apply(record, position, replayed);
      if (this.held !== null && this.applied >= this.replayEnd) this.endReplay();
      afterTurn(this);
      waiting = true;
    } finally {
      if (!waiting) this.stopDriving();
    }
  }

  /** @internal The code settled after the last record: conditions are checked, then the next record applies. */
  settled(): void {
    let again: boolean;
    try {
      again = this.checkConditions();
    } catch (e) {
      this.stopDriving();
      throw e;
    }
    if (again) afterTurn(this);
    else this.applyNext();
  }

  private stopDriving(): void {
    this.driving = false;
    if (this.arrived.size === 0 || this.broken) {
      for (const w of this.idleWaiters?.splice(0) ?? []) w();
    }
    this.host.changed();
  }

  private endReplay(): void {
    const held = this.held ?? [];
    this.held = null;
    this.replayCalls = undefined;
    // A finished run is replayed only to answer (a query, an update's refusal): nothing it asks for runs.
    if (this.finished !== undefined) return;
    for (const action of held) action();
  }

  private apply(record: JournalRecord, position: number, replayed: boolean): void {
    // Calls are numbered from 1 as the code makes them, so the code has made call `seq` iff seq <= this.seq.
    if (replayed && isCallRecord(record) && record.seq > this.seq) {
      this.breakWith(this.nonDeterminism(position, describeRecord(record), `${this.lastCall()} and is now waiting`));
      return;
    }
    switch (record.kind) {
      case "start":
        this.begin(record.seed, record.input);
        if (record.update) this.runUpdate(record.update.id, record.update.name, record.update.arg);
        return;
      case "step": {
        const p = this.pending.take(record.seq);
        if (!replayed) this.inFlight--;
        this.attempts?.delete(record.seq);
        if (record.ok) p?.resolve(record.value);
        else if (this.cancelledSteps?.delete(record.seq) === true) {
          this.cancelPending = undefined;
          p?.reject(new CancelledError(`step '${record.name}' of ${this.workflowId} was cancelled: ${record.error?.message ?? "it failed"}`, { cause: record.error }));
        } else p?.reject(record.error);
        return;
      }
      case "attempt": {
        (this.attempts ??= new Map()).set(record.seq, { failed: record.attempt, retryAt: record.retryAt, lastError: record.error });
        const recorded = this.attemptWaiters?.get(record.seq);
        if (recorded !== undefined && !replayed) {
          this.attemptWaiters?.delete(record.seq);
          recorded();
        }
        return;
      }
      case "fired":
        this.pending.take(record.seq)?.resolve(undefined);
        return;
      case "signal":
        this.applySignal(record.name, record.value);
        return;
      case "update":
        this.runUpdate(record.id, record.name, record.arg);
        return;
      case "update-result": {
        const outcome: UpdateOutcome = record.ok ? { ok: true, value: record.value } : { ok: false, error: record.error };
        (this.updateResults ??= new Map()).set(record.id, outcome);
        return;
      }
      case "finish":
        if (replayed && record.status !== "terminated" && record.status !== "cancelled" && !this.bodyDone) {
          this.breakWith(this.nonDeterminism(position, describeRecord(record), `${this.lastCall()} and has not finished`));
          return;
        }
        this.finished = record.status;
        if (record.status === "terminated") this.abortSteps(record.error ?? new TerminatedError(`run ${this.host.runId} of ${this.workflowId} was terminated`));
        return;
      case "heartbeat":
        (this.progress ??= new Map()).set(record.seq, record.progress);
        return;
      case "completion": {
        (this.completions ??= new Map()).set(record.token, record);
        const waiter = this.completionWaiters?.get(record.token);
        this.completionWaiters?.delete(record.token);
        waiter?.(record);
        return;
      }
      case "child": {
        const p = this.pending.take(record.seq);
        if (record.ok) p?.resolve(undefined);
        else p?.reject(record.error);
        return;
      }
      case "child-result": {
        if (this.childResults?.has(record.seq)) return;
        const timerSeq = this.childTimeouts?.get(record.seq);
        this.childTimeouts?.delete(record.seq);
        this.cancelTimer(timerSeq);
        (this.childResults ??= new Map()).set(record.seq, record);
        for (const w of this.childWaiters?.get(record.seq) ?? []) w(record);
        this.childWaiters?.delete(record.seq);
        return;
      }
      case "cancel": {
        const error = new CancelledError(`run ${this.host.runId} of ${this.workflowId} was cancelled: ${record.reason}`);
        this.pending.forEach((p, seq) => {
          if (p.step === true) (this.cancelledSteps ??= new Set()).add(seq);
        });
        if ((this.waits?.size ?? 0) === 0) this.cancelPending = error;
        for (const interrupt of [...(this.waits ?? [])]) interrupt(error);
        this.cancelAbort = error;
        if (!replayed) this.abortSteps(error);
        return;
      }
      case "timer":
      case "patch":
      case "attributes":
        return;
    }
  }

  private begin(seed: number, input: unknown): void {
    this.random_ = new DeterministicRandom(seed);
    try {
      const child = this.container.createChildContainer();
      child.register(Ctx, { useValue: new Ctx(this) });
      this.instance = child.resolve(this.definition.cls) as Record<string, any>;
    } catch (e) {
      const what = `workflow ${this.definition.name} (ID ${this.workflowId})`;
      this.breakWith(explainMissingTypeInfo(this.definition.cls, e, what) ?? new ConfigError(`${what} could not be constructed: ${(e as Error)?.message ?? String(e)}`, { cause: e }));
      return;
    }
    bindInstance(this.instance, this);
    let body: Promise<unknown>;
    try {
      body = Promise.resolve((this.instance as { run(i: unknown): unknown }).run(input));
    } catch (e) {
      body = Promise.reject(e);
    }
    body.then(
      // A body that returns before its cancellation reached it ends cancelled: the journal holds the cancel.
      (value) => {
        const cancelled = this.takeCancellation();
        this.bodyFinished(cancelled === undefined ? { status: "ok", value } : { status: "cancelled", error: cancelled });
      },
      (error: unknown) => this.bodyFinished({ status: error instanceof CancelledError ? "cancelled" : "failed", error: asError(error) }),
    );
  }

  private bodyFinished(outcome: { status: "ok"; value: unknown } | { status: "failed" | "cancelled"; error: Error }): void {
    if (this.bodyDone || this.broken) return;
    this.bodyDone = true;
    if (this.replayHasFinish) return;
    this.whenLive(() => {
      if (this.finished) return;
      const at = this.host.clock.now();
      try {
        this.record({ kind: "finish", at, ...outcome });
      } catch (encodeError) {
        this.recordOrBreak({ kind: "finish", at, status: "failed", error: asError(encodeError) });
      }
    });
  }

  private applySignal(name: string, value: unknown): void {
    const method = this.definition.signals.get(name);
    if (method !== undefined && this.instance) {
      try {
        const r = (this.instance[method] as (v: unknown) => unknown)(value);
        if (r instanceof Promise) r.catch((e: unknown) => this.bodyFinished({ status: "failed", error: asError(e) }));
      } catch (e) {
        this.bodyFinished({ status: "failed", error: asError(e) });
      }
      return;
    }
    const waiting = this.waiters?.get(name);
    const first = waiting?.shift();
    if (first !== undefined) {
      this.cancelTimer(first.timerSeq);
      first.resolve(value);
      return;
    }
    const box = this.mailbox?.get(name) ?? [];
    box.push(value);
    (this.mailbox ??= new Map()).set(name, box);
  }

  private runUpdate(id: string, name: string, arg: unknown): void {
    (this.acceptedUpdates ??= new Set()).add(id);
    const update = this.definition.updates.get(name);
    let result: Promise<unknown>;
    if (update === undefined || !this.instance) {
      result = Promise.reject(unknownHandler("update", name, this.definition, this.workflowId));
    } else {
      try {
        result = Promise.resolve((this.instance[update.method] as (a: unknown) => unknown)(arg));
      } catch (e) {
        result = Promise.reject(e);
      }
    }
    const done = (outcome: { ok: true; value: unknown } | { ok: false; error: Error }): void => {
      if (this.replayUpdateResults?.has(id)) return;
      this.whenLive(() => {
        const at = this.host.clock.now();
        try {
          this.record({ kind: "update-result", id, at, ...outcome });
        } catch (encodeError) {
          this.recordOrBreak({ kind: "update-result", id, at, ok: false, error: asError(encodeError) });
        }
      });
    };
    result.then(
      (value) => done({ ok: true, value }),
      (error: unknown) => done({ ok: false, error: asError(error) }),
    );
  }

  private checkConditions(): boolean {
    if (this.conditions === undefined || this.conditions.size === 0) return false;
    let any = false;
    for (const c of [...this.conditions]) {
      let holds = false;
      try {
        holds = c.pred();
      } catch (e) {
        this.conditions?.delete(c);
        this.bodyFinished({ status: "failed", error: asError(e) });
        continue;
      }
      if (holds) {
        this.conditions?.delete(c);
        this.cancelTimer(c.timerSeq);
        c.resolve(true);
        any = true;
      }
    }
    return any;
  }

  private assertUsable(): void {
    if (this.broken) throw this.broken;
    if (!this.instance) throw new FuseeError(`workflow ${this.definition.name} (ID ${this.workflowId}) has not started`);
  }

  private breakWith(error: Error): void {
    if (this.broken) return;
    this.broken = error;
    for (const w of this.idleWaiters?.splice(0) ?? []) w();
    this.host.changed();
  }
}

function asError(e: unknown): Error {
  if (e instanceof Error) return e;
  const error = new Error(typeof e === "string" ? e : `non-error thrown: ${safeString(e)}`);
  return error;
}

function safeString(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
