import type { DependencyContainer } from "tsyringe";
import { FuseeError, type NonDeterminismError } from "../core/errors.js";
import { InlineFirstMap } from "../core/inline-first-map.js";
import { isCallRecord } from "../journal/record-kinds.js";
import type { CallRecord, Carried, JournalRecord, RecordKind } from "../journal/records.js";
import { CallCheck } from "./call-check.js";
import { CatchUp } from "./catch-up.js";
import type { FinishedStatus } from "../core/status.js";
import type { CtxBackend } from "./ctx-backend.js";
import type { ChildHandle, ChildOptions } from "./ctx-options.js";
import { unknownHandler, type WorkflowDefinition } from "./registry.js";
import { outsideSteps, type StepHost } from "./run-binding.js";
import type { RunHost } from "./run-host.js";
import { afterTurn } from "./settle-turn.js";
import type { StepOptions } from "./step-options.js";
import { Cancellation, cancellationRecords } from "./features/cancellation.js";
import { Children, childRecords } from "./features/children.js";
import { Completions, completionRecords } from "./features/completions.js";
import { Conditions } from "./features/conditions.js";
import { Lifecycle, lifecycleRecords } from "./features/lifecycle.js";
import { patchRecords, patched } from "./features/patches.js";
import { SearchAttributes, attributeRecords } from "./features/attributes.js";
import { sendMessage } from "./features/messages.js";
import type { Message } from "./messages.js";
import type { LogLevel } from "../core/logger.js";
import { writeRunLog, type LogFields } from "./workflow-log.js";
import { asError, type Pending, type RecordAppliers, type RunCursor } from "./features/run-cursor.js";
import { Signals, signalRecords } from "./features/signals.js";
import { Steps, stepRecords } from "./features/steps.js";
import { Timers, timerRecords } from "./features/timers.js";
import { Updates, updateRecords, type UpdateOutcome } from "./features/updates.js";

export type { ChildRequest, RunHost } from "./run-host.js";

/**
 * Runs one workflow run by applying its journal, record by record, to fresh workflow code.
 *
 * Replay and live execution are one mechanism: records (replayed from the log, or just made durable)
 * are applied strictly in journal order, and the workflow code settles between two records, so
 * handlers apply at the same points on every replay. Calls the code makes are numbered; while
 * replaying, each call is answered from (and checked against) the record with its number, and calls
 * the journal does not answer yet are held until the replay is done, then executed.
 *
 * The executor is the replay cursor alone: what each record means belongs to a feature module under
 * `features/`, which owns its state and applies its records (see {@link APPLIERS}).
 */
export class RunExecutor implements CtxBackend, StepHost, RunCursor {
  private lastAt = 0;
  private applied = 0;
  private replayEnd = 0;
  /** `ctx.log` writes nothing while the code reacts to the records before this position. */
  private quietUntil = 0;
  private held: Array<() => void> | null = null;
  private readonly calls: CallCheck;
  private readonly arrived = new InlineFirstMap<JournalRecord>();
  readonly pending = new InlineFirstMap<Pending>();
  private idleWaiters: Array<() => void> | undefined;
  private readonly catchUp = new CatchUp();
  private driving = false;
  /** Set when the code and the journal disagree, or the workflow cannot be instantiated. */
  broken: Error | undefined;

  readonly lifecycle: Lifecycle;
  readonly steps: Steps = new Steps(this);
  readonly timers: Timers = new Timers(this);
  readonly cancellation: Cancellation = new Cancellation(this);
  private signals_: Signals | undefined;
  private conditions_: Conditions | undefined;
  private updates_: Updates | undefined;
  private completions_: Completions | undefined;
  private children_: Children | undefined;
  private attributes_: SearchAttributes | undefined;

  constructor(
    readonly definition: WorkflowDefinition,
    container: DependencyContainer,
    readonly host: RunHost,
  ) {
    this.lifecycle = new Lifecycle(this, container);
    this.calls = new CallCheck(definition, host);
  }

  /** The workflow instance, once the start record applied. */
  get instance(): Record<string, unknown> | undefined {
    return this.lifecycle.instance;
  }

  get finished(): FinishedStatus | undefined {
    return this.lifecycle.finished;
  }

  get workflowId(): string {
    return this.host.workflowId;
  }

  get workflowType(): string {
    return this.definition.name;
  }

  get signals(): Signals {
    return (this.signals_ ??= new Signals(this));
  }

  get conditions(): Conditions {
    return (this.conditions_ ??= new Conditions(this));
  }

  get updates(): Updates {
    return (this.updates_ ??= new Updates(this));
  }

  get updatesUnfinished(): boolean {
    return this.updates_?.anyUnfinished === true;
  }

  get completions(): Completions {
    return (this.completions_ ??= new Completions(this));
  }

  get children(): Children {
    return (this.children_ ??= new Children(this));
  }

  get searchAttributes(): SearchAttributes {
    return (this.attributes_ ??= new SearchAttributes(this));
  }

  /**
   * Starts applying `records` (the durable journal so far) as a replay. The code reacted to the
   * first `reacted` of them before (all of them, unless the engine knows better): `ctx.log` stays
   * quiet until it reacts to a later one.
   */
  load(records: readonly JournalRecord[], reacted = records.length): void {
    this.replayEnd = records.length;
    this.quietUntil = Math.min(reacted, records.length);
    if (records.length > 0) this.held = [];
    records.forEach((record, position) => {
      this.calls.replays(record, position);
      if (record.kind === "finish") this.lifecycle.finishReplayed = true;
      if (record.kind === "update-result") this.updates.resultReplayed(record.id);
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
    // A run continuing as new is busy until the next run takes over: it is never parked meanwhile.
    if (
      this.instance === undefined ||
      this.lifecycle.continuing ||
      this.driving ||
      this.steps.inFlight > 0 ||
      this.arrived.size > 0 ||
      this.held !== null ||
      this.catchUp.waits
    )
      return "running";
    return "suspended";
  }

  /** Resolves once every record delivered so far has been applied and the code has settled. */
  whenIdle(): Promise<void> {
    // A broken run applies nothing more: what arrived stays, and waiting for it would never end.
    if ((!this.driving && this.arrived.size === 0 && !this.catchUp.waits) || this.broken !== undefined) return Promise.resolve();
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
    this.updates.validate(name, arg);
  }

  /** The recorded outcome of update `id`, once its result record has been applied. */
  updateOutcome(id: string): UpdateOutcome | undefined {
    return this.updates_?.outcome(id);
  }

  /** True when update `id` was accepted (journaled, or being journaled) by this run. */
  knowsUpdate(id: string): boolean {
    return this.updates_?.knows(id) === true;
  }

  /** IDs of the updates this run accepted and has not answered. */
  unansweredUpdates(): string[] {
    return this.updates_?.unanswered() ?? [];
  }

  /** Reserves update `id` before its record is appended, so a concurrent retry waits for it instead. */
  claimUpdate(id: string): void {
    this.updates.claim(id);
  }

  /** Whether the result of the child started by call `seq` was journaled in this run. */
  hasChildResult(seq: number): boolean {
    return this.children_?.has(seq) === true;
  }

  /** Whether `token` may complete: `open` once issued and unanswered. */
  completionState(token: string): "open" | "used" | "unknown" {
    return this.completions_?.state(token) ?? "unknown";
  }

  /** Reserves `token` before its completion is appended, so a concurrent second answer is refused. */
  claimCompletion(token: string): void {
    this.completions.claim(token);
  }

  /**
   * Whether the run has work it can do without time passing or anything arriving: records to apply,
   * code to settle, a replay under way, and (with `steps`) step attempts whose code runs.
   */
  busy(steps: boolean): boolean {
    if (this.broken !== undefined || this.finished !== undefined) return false;
    if (this.driving || this.arrived.size > 0 || this.held !== null || this.catchUp.waits || this.instance === undefined) return true;
    return steps && this.steps.active();
  }

  /** True while step calls of this executor are in flight. */
  get runsSteps(): boolean {
    return this.steps.any;
  }

  /**
   * Aborts every step call this executor runs: the run was cancelled or terminated, or can no longer
   * record their outcomes (the engine shuts down, the run was replaced or moved away).
   */
  abortSteps(reason: Error): void {
    this.steps.abort(reason);
  }

  // ---- CtxBackend ----

  runId(): number {
    return this.host.runId;
  }

  now(): number {
    return this.lastAt;
  }

  random(): number {
    return this.lifecycle.rng().next();
  }

  uuid(): string {
    return this.lifecycle.rng().uuid();
  }

  journalSize(): number {
    return this.applied;
  }

  step(name: string, fn: () => unknown, options: StepOptions, args?: string): Promise<unknown> {
    return this.steps.step(name, fn, options, args);
  }

  sleepUntil(until: number): Promise<void> {
    return this.timers.sleepUntil(until);
  }

  waitFor(name: string, timeoutMs: number | undefined): Promise<unknown> {
    return this.signals.waitFor(name, timeoutMs);
  }

  condition(pred: () => boolean, timeoutMs: number | undefined): Promise<boolean> {
    return this.conditions.wait(pred, timeoutMs);
  }

  awaitCompletion(
    name: string,
    send: (c: { token: string }) => unknown,
    options: StepOptions,
    waitTimeoutMs: number | undefined,
  ): Promise<unknown> {
    return this.completions.await(name, send, options, waitTimeoutMs);
  }

  send(target: string, message: Message): Promise<unknown> {
    return sendMessage(this, target, message);
  }

  log(level: LogLevel, message: string, fields: LogFields | undefined): void {
    // Code re-run for records it reacted to before (in this process or an earlier one) wrote its lines then.
    if (this.applied <= this.quietUntil) return;
    writeRunLog(
      this.host.logger,
      { workflowId: this.workflowId, workflowType: this.workflowType, runId: this.host.runId },
      level,
      message,
      fields,
    );
  }

  startChild(type: string, id: string, input: unknown, options: ChildOptions): Promise<ChildHandle<unknown>> {
    return this.children.start(type, id, input, options);
  }

  continueAsNew(input: unknown, attributes?: Readonly<Record<string, unknown>>): Promise<never> {
    return this.lifecycle.continueAsNew(input, attributes);
  }

  /**
   * What this run, which continued as new, hands on to the next run of its ID (see
   * `Lifecycle.handOn`); asked once every record sent to it is applied.
   */
  handOn(now: number, windowMs: number): Carried {
    return this.lifecycle.handOn(now, windowMs);
  }

  patched(id: string, deprecated: boolean): boolean {
    return patched(this, id, deprecated);
  }

  setAttributes(attributes: Record<string, unknown>, removed: readonly string[] = []): void {
    this.searchAttributes.change(attributes, removed);
  }

  attributes(): Readonly<Record<string, unknown>> {
    return this.attributes_?.get() ?? {};
  }

  // ---- RunCursor: the cursor's services to the features ----

  get replaying(): boolean {
    return this.held !== null;
  }

  recorded(seq: number): boolean {
    return this.calls.recorded(seq);
  }

  nextRecorded(): CallRecord | undefined {
    return this.calls.nextRecorded();
  }

  skipCall(): void {
    this.calls.skip();
  }

  inReplay(): boolean {
    return this.applied < this.replayEnd;
  }

  call(kind: CallRecord["kind"], name: string | undefined, args?: string): number {
    const seq = this.calls.call(kind, name, args);
    if (typeof seq === "number") return seq;
    this.breakWith(seq);
    throw seq;
  }

  whenLive(action: () => void): void {
    if (this.held !== null) this.held.push(action);
    else action();
  }

  whenCaughtUp(action: () => void): void {
    this.catchUp.when(this.applied, this.host.appended?.() ?? 0, action);
  }

  /**
   * Journals the failure that replaces an unjournalable outcome. When even that cannot be written
   * (the payload cipher refuses to seal anything more), the run stops here, broken with the reason,
   * instead of throwing where nothing would catch it.
   */
  recordOrBreak(record: JournalRecord): void {
    try {
      this.record(record);
    } catch (e) {
      this.breakWith(asError(e));
    }
  }

  record(record: JournalRecord): void {
    if (this.host.closed() || this.broken) return;
    const position = this.host.appended?.();
    this.host.append(record);
    if (position !== undefined && (this.host.appended?.() ?? 0) > position) this.catchUp.appendedOwn(position);
  }

  codeFailed(error: Error): void {
    this.lifecycle.bodyFinished({ status: "failed", error });
  }

  mismatch(position: number, record: JournalRecord, asking: string): NonDeterminismError {
    return this.calls.mismatch(position, record, asking);
  }

  // ---- the cursor ----

  private drive(): void {
    if (this.driving) return;
    this.driving = true;
    outsideSteps(this, this.applyNext);
  }

  /** Applies the next arrived record and waits a turn for the code to settle, or stops driving. */
  private applyNext(): void {
    let waiting = false;
    try {
      // Actions waiting for the code to react to the records before them run once it has (it settled after each).
      if (!this.broken) this.catchUp.runDue(this.applied);
      const record = this.arrived.get(this.applied);
      if (record === undefined || this.broken) return;
      this.arrived.take(this.applied);
      const position = this.applied++;
      this.catchUp.applying(position);
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
      again = this.conditions_?.check() ?? false;
    } catch (e) {
      this.stopDriving();
      throw e;
    }
    if (again) afterTurn(this);
    else this.applyNext();
  }

  private stopDriving(): void {
    this.driving = false;
    if ((this.arrived.size === 0 && !this.catchUp.waits) || this.broken) {
      for (const w of this.idleWaiters?.splice(0) ?? []) w();
    }
    this.host.changed();
  }

  private endReplay(): void {
    const held = this.held ?? [];
    this.held = null;
    this.calls.endReplay();
    // A finished run is replayed only to answer (a query, an update's refusal): nothing it asks for runs.
    if (this.finished !== undefined) return;
    for (const action of held) action();
  }

  private apply(record: JournalRecord, position: number, replayed: boolean): void {
    const lifecycle = this.lifecycle;
    if (lifecycle.continuing && lifecycle.divert(record)) return;
    if (record.kind === "start" || (record as { request?: string }).request !== undefined) lifecycle.note(record);
    // A replayed call record whose call the code has not made: the code ended or waits where the journal goes on.
    if (replayed && isCallRecord(record) && !this.calls.made(record.seq)) {
      this.breakWith(this.mismatch(position, record, this.lifecycle.ending("and is now waiting")));
      return;
    }
    (APPLIERS[record.kind] as (run: RunExecutor, r: JournalRecord, replayed: boolean, position: number) => void)(
      this,
      record,
      replayed,
      position,
    );
  }

  // ---- failures ----

  private assertUsable(): void {
    if (this.broken) throw this.broken;
    if (!this.instance) throw new FuseeError(`workflow ${this.definition.name} (ID ${this.workflowId}) has not started`);
  }

  breakWith(error: Error): void {
    if (this.broken) return;
    this.broken = error;
    for (const w of this.idleWaiters?.splice(0) ?? []) w();
    this.host.changed();
  }
}

/**
 * What each record kind does to a run, gathered from the features that own them; the type requires
 * one entry per kind, so a new kind cannot be left unapplied.
 */
const APPLIERS: RecordAppliers<RecordKind, RunExecutor> = {
  ...lifecycleRecords,
  ...stepRecords,
  ...timerRecords,
  ...signalRecords,
  ...updateRecords,
  ...completionRecords,
  ...childRecords,
  ...cancellationRecords,
  ...patchRecords,
  ...attributeRecords,
};
