import type { DependencyContainer } from "tsyringe";
import type { Clock } from "../core/clock.js";
import {
  CancelledError,
  CodecError,
  FuseeError,
  NotFoundError,
  RejectedError,
  ShardMovedError,
  StorageError,
  TerminatedError,
} from "../core/errors.js";
import { checkWorkflowId, checkName, shardOf } from "../core/ids.js";
import { readBackRecord, type PayloadCodec } from "../journal/record-codec.js";
import { wakesRun } from "../journal/record-kinds.js";
import type { FinishRecord, JournalRecord } from "../journal/records.js";
import type { ListFilter, RunDetail, RunStatus, StartOptions, UpdateStage } from "../client/types.js";
import type { Log } from "../storage/log.js";
import type { RunExecutor } from "../workflow/run-executor.js";
import { ChildRuns } from "./child-runs.js";
import { type EngineEvent, runStopped } from "./engine-events.js";
import type { RunTelemetry } from "./run-telemetry.js";
import type { Logger } from "../core/logger.js";
import { RunStarts } from "./run-starts.js";
import { RunRequests } from "./run-requests.js";
import { FlowControl } from "./flow-control.js";
import { Batch, Debounce } from "./flow-rules.js";
import { checkFilter } from "../journal/list-filter.js";
import { RunCache } from "./run-cache.js";
import { RunEntry } from "./run-entry.js";
import type { RunHostEngine } from "./run-host.js";
import { RunIndex } from "./run-index.js";
import type { RunRecovery } from "./run-recovery.js";
import { RunRecords } from "./run-records.js";
import { RunReplacement } from "./run-replacement.js";
import { type OnePassRead, ShardLoading } from "./shard-loading.js";
import type { BatchRule, DebounceRule, ParentLink, RunService } from "./run-service.js";
import { listRuns, statusOf, stoppedReason } from "./run-status.js";
import type { ScheduleOp } from "./schedule-handle.js";
import type { Message } from "../workflow/messages.js";
import { deliverMessage } from "./run-messages.js";
import { appendPerforming, noteRequest, performedRequest, requestField } from "./performed-requests.js";
import type { ScheduleDescription } from "./schedule-runtime.js";
import type { ScheduleSettings } from "./schedule-spec.js";
import { TimerQueue } from "./timer-queue.js";
import { answerToken, type TokenAnswerDeps } from "./token-answers.js";
import { Waiters } from "./waiters.js";
import type { WorkflowCatalog } from "./workflow-catalog.js";

/** What the runs of one process need of the engine that hosts them. */
export interface LocalRunsDeps {
  readonly log: Log;
  readonly codec: PayloadCodec;
  readonly clock: Clock;
  readonly catalog: WorkflowCatalog;
  readonly container: DependencyContainer;
  /** `Config.cache`: runs kept in memory while they only wait. */
  readonly cacheSize: number;
  readonly maxRecordBytes: number;
  readonly keepHistory: boolean;
  /** Whether this process holds the shard: always, outside a cluster. */
  owns(shard: number): boolean;
  /**
   * Whether this process may still start work (a step, a timer) on the shard: false once its lease
   * ran out on this process's clock, even before the shard is forgotten. Always, when absent.
   */
  leased?(shard: number): boolean;
  /** Tells the operator of a fatal shard or a run that stopped. */
  emit(event: EngineEvent): void;
  /** `Config.logger`, where `ctx.log` writes. */
  readonly logger?: Logger | undefined;
  /** Spans and metrics, when OpenTelemetry is loaded and not turned off. */
  readonly telemetry?: RunTelemetry | undefined;
  /** The runs a one-pass open is indexing while the log recovers: the index starts from them. */
  readonly recovery?: RunRecovery | undefined;
  /** `Config.idempotencyWindow`: how long the runs after a replaced run remember the requests and update IDs it performed. */
  readonly idempotencyWindowMs: number;
}

/**
 * The runs of the shards this process holds: their index, their journals, their executors in
 * memory, and every operation on them. In a cluster, calls on runs of other shards never reach
 * here (see `RoutedRuns`); one that does, because its shard moved meanwhile, is refused with
 * `ShardMovedError`, so its caller asks the shard's next owner.
 *
 * Calls that change a run take the ID of the cluster request they perform, when they perform one:
 * the record they append names it, so a next owner finds it performed ({@link performedRequest}).
 *
 * The work is done in modules of its own (the index, records, cache, starts, requests, children,
 * flow control, shard loading); this class wires them to one another and answers each call of
 * {@link RunService} in a few lines. That wiring and those answers are what make it the longest
 * file of the engine, and splitting them would only spread one table of calls over several files.
 */
export class LocalRuns implements RunService {
  readonly index: RunIndex;
  readonly runs: Map<string, RunEntry>;
  readonly records: RunRecords;
  readonly cache: RunCache;
  readonly timers: TimerQueue<RunEntry>;
  readonly flow: FlowControl;
  private readonly children: ChildRuns;
  private readonly starts: RunStarts;
  private readonly results = new Waiters<string, FinishRecord>();
  private readonly started = new Waiters<string, void>();
  private readonly requests: RunRequests;
  private readonly loading: ShardLoading;
  private readonly replacement: RunReplacement;
  /** Where calls on other runs go (a child's start, its closing, a schedule's runs): `RoutedRuns` in a cluster. */
  private router: RunService = this;
  private closed = false;
  private fatal: Error | undefined;
  /** Executors whose breaking was reported, so a run stopped is told once per load. */
  private readonly reported = new WeakSet<RunExecutor>();
  private readonly tokens: TokenAnswerDeps = {
    held: (id) => this.held(id),
    onRun: (id, request, call) => this.onRun(id, request, call),
    replacing: (id) => this.replacement.busy(id),
    idleExecutor: (entry) => this.idleExecutor(entry),
    append: (entry, record, request) => appendPerforming(this.records, entry, record, request),
    now: () => this.deps.clock.now(),
  };

  constructor(private readonly deps: LocalRunsDeps) {
    const time = deps.clock;
    this.timers = new TimerQueue<RunEntry>(time, (entry, seq, _at, runId) => this.fireTimer(entry, seq, runId));
    this.flow = new FlowControl({
      log: deps.log,
      codec: deps.codec,
      clock: time,
      maxRecordBytes: deps.maxRecordBytes,
      runs: {
        start: (type, id, input, options) => this.router.start(type, id, input, options),
        awaitResult: (id) => this.router.awaitResult(id),
        status: (id) => this.router.status(id),
        terminate: (id, reason) => this.router.terminate(id, reason),
        cancel: (id, reason) => this.router.cancel(id, reason),
      },
      failed: (e) => this.storageFailed(e),
    });
    this.index = new RunIndex(
      {
        codec: deps.codec,
        armTimer: (until, entry, seq) => {
          if (!this.closed) this.timers.add(until, entry, seq, entry.runId);
        },
        recoverSystem: (shard, stream, body) => this.flow.recover(shard, stream, body),
      },
      deps.recovery?.runs,
    );
    this.runs = this.index.runs;
    this.records = new RunRecords({
      log: deps.log,
      codec: deps.codec,
      maxRecordBytes: deps.maxRecordBytes,
      keepHistory: deps.keepHistory,
      sink: {
        durable: (entry, runId, position, record, body) => this.durable(entry, runId, position, record, body),
        failed: (e, shard) => this.storageFailed(e, shard),
      },
      assertOpen: () => this.assertOpen(),
      stopped: () => this.fatal !== undefined || this.closed,
      failed: (e, shard) => this.storageFailed(e, shard),
    });
    const telemetry = deps.telemetry;
    const host: RunHostEngine = {
      ...(telemetry === undefined
        ? {}
        : { observeAttempt: (entry: RunEntry, name: string, attempt: number) => telemetry.attempt(entry, name, attempt) }),
      clock: time,
      logger: deps.logger,
      closed: () => this.closed,
      holds: (shard) => this.deps.leased?.(shard) ?? true,
      append: (entry, record) => this.records.appendFromRun(entry, record),
      changed: (entry, executor) => this.executorChanged(entry, executor),
      acquire: (options) => this.flow.limits.acquire(options),
      startChild: (entry, request) => void this.children.start(entry, request),
      continueAsNew: (entry, runId, def, input, attributes, executor) =>
        this.replacement.continueAsNew(entry, runId, def, input, attributes, executor),
      closeChild: (entry, childId, reason) => void this.children.close(entry, childId, reason),
      deliver: (target, message, request) => this.router.deliver(target, message, request),
    };
    this.cache = new RunCache({
      catalog: deps.catalog,
      container: deps.container,
      size: deps.cacheSize,
      host,
      read: (entry, upTo) => this.records.read(entry, upTo),
      closed: () => this.closed,
      unloadable: (entry, e) => this.unloadable(entry, e),
    });
    this.requests = new RunRequests({
      clock: time,
      records: this.records,
      telemetry,
      assertOpen: () => this.assertOpen(),
      onRun: (id, request, call) => this.onRun(id, request, call),
      replacing: (id) => this.replacement.busy(id),
      assertCanGoOn: (entry) => this.assertCanGoOn(entry),
      idleExecutor: (entry) => this.idleExecutor(entry),
      catalog: deps.catalog,
    });
    this.starts = new RunStarts({
      runs: this.runs,
      records: this.records,
      cache: this.cache,
      catalog: deps.catalog,
      clock: time,
      shardCount: deps.log.shardCount,
      terminate: (id, reason) => this.terminate(id, reason),
      started: (id) => this.started.resolve(id),
      currentTrace: () => telemetry?.current(),
    });
    this.children = new ChildRuns({
      runs: this.runs,
      records: this.records,
      now: () => time.now(),
      closed: () => this.closed,
      replacing: (id) => this.replacement.busy(id),
      local: (id) => this.deps.owns(shardOf(id, this.deps.log.shardCount)),
      router: () => this.router,
      begin: (def, id, input, parent, request) => {
        const from = this.runs.get(parent.id);
        const trace = from === undefined ? undefined : telemetry?.traceOf(from);
        return this.starts.begin(def, id, input, {}, undefined, { parent, ...(request ? { request } : {}), ...(trace ? { trace } : {}) });
      },
      resolve: (type) => this.deps.catalog.resolve(type),
      failed: (e, shard) => this.storageFailed(e, shard),
    });
    this.replacement = new RunReplacement({
      records: this.records,
      cache: this.cache,
      catalog: deps.catalog,
      clock: time,
      idempotencyWindowMs: deps.idempotencyWindowMs,
      begin: (def, id, input, attributes, lineage) =>
        this.starts.begin(def, id, input, attributes === undefined ? {} : { attributes }, undefined, lineage),
      closeChild: (entry, childId, reason) => this.children.close(entry, childId, reason),
      keepChildren: (entry) => this.children.adopt(entry),
      failed: (entry, runId, e) => this.runFailedToContinue(entry, runId, e),
    });
    this.loading = new ShardLoading({
      log: deps.log,
      index: this.index,
      timers: this.timers,
      flow: this.flow,
      records: this.records,
      children: this.children,
      closed: () => this.closed,
      forgetShard: (shard) => this.forgetShard(shard),
    });
  }

  /** Sends calls on runs of other shards through `router` from now on. */
  routeThrough(router: RunService): void {
    this.router = router;
  }

  // ---- RunService ----

  async start(type: string, id: string, input: unknown, options: StartOptions, request?: string): Promise<void> {
    this.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.held(checkWorkflowId(id));
    await this.starts.begin(def, id, input, options, undefined, request === undefined ? {} : { request });
  }

  async updateWithStart(
    type: string,
    id: string,
    input: unknown,
    update: string,
    arg: unknown,
    options: StartOptions,
    updateId: string,
  ): Promise<unknown> {
    this.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.held(checkWorkflowId(id));
    const existing = this.runs.get(id);
    // A running run takes the update unless the ID policy says otherwise ("fail", "terminate-existing").
    const running = options.idPolicy?.running ?? "use-existing";
    if (existing !== undefined && existing.finished === undefined && running === "use-existing")
      return this.update(id, update, arg, updateId);
    return this.requests.startWith(def, id, update, updateId, () =>
      this.starts.begin(def, id, input, { ...options, idPolicy: { ...options.idPolicy, running } }, { id: updateId, name: update, arg }),
    );
  }

  async signalWithStart(
    type: string,
    id: string,
    input: unknown,
    signal: string,
    value: unknown,
    options: StartOptions,
    request?: string,
  ): Promise<void> {
    this.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.held(checkWorkflowId(id));
    checkName(signal, "signal name");
    const existing = this.runs.get(id);
    if (existing !== undefined && existing.finished === undefined) return this.signal(id, signal, value, request);
    // One start record carries the signal, so no crash can leave the new run without it.
    await this.starts.begin(def, id, input, options, undefined, { signal: { name: signal, value }, ...requestField(request) });
  }

  /** Applies a message another workflow sent, once per request (see `deliverMessage`). */
  deliver(target: string, message: Message, request: string): Promise<unknown> {
    this.assertOpen();
    this.held(checkWorkflowId(target));
    return deliverMessage(this, target, message, request);
  }

  async awaitResult(id: string): Promise<unknown> {
    this.held(id);
    const entry = this.runs.get(id);
    if (entry === undefined)
      throw new NotFoundError(`no workflow run has the ID '${id}': it never started, or its retention has passed and it was forgotten`);
    let finish: FinishRecord;
    if (entry.finished !== undefined) finish = await this.records.finishRecordOf(entry);
    else {
      const stopped = stoppedReason(entry, (type) => this.deps.catalog.has(type));
      if (stopped !== undefined) throw stopped;
      finish = await this.results.wait(id);
    }
    if (finish.status === "ok") return finish.value;
    throw finish.error ?? new FuseeError(`run ${id} ended ${finish.status}`);
  }

  async awaitStarted(id: string): Promise<void> {
    this.assertOpen();
    this.held(id);
    if (!this.runs.has(id)) await this.started.wait(id);
  }

  async status(id: string): Promise<RunStatus | undefined> {
    this.held(id);
    const entry = this.runs.get(id);
    return entry === undefined ? undefined : this.statusOf(entry);
  }

  async describe(id: string): Promise<RunDetail | undefined> {
    this.held(id);
    const entry = this.runs.get(id);
    return entry === undefined ? undefined : { ...this.statusOf(entry), journal: await this.records.read(entry) };
  }

  signal(id: string, name: string, value: unknown, request?: string): Promise<void> {
    return this.requests.signal(id, name, value, request);
  }

  query(id: string, name: string, args: readonly unknown[]): Promise<unknown> {
    return this.requests.query(id, name, args);
  }

  update(id: string, name: string, arg: unknown, updateId: string, stage: UpdateStage = "completed"): Promise<unknown> {
    return this.requests.update(id, name, arg, updateId, stage);
  }

  async terminate(id: string, reason: string, request?: string): Promise<void> {
    this.assertOpen();
    await this.onRun(id, request, (entry) => {
      this.unfinished(id);
      const error = new TerminatedError(`run ${entry.runId} of ${id} was terminated: ${reason}`);
      return appendPerforming(this.records, entry, { kind: "finish", status: "terminated", error, at: this.deps.clock.now() }, request);
    });
  }

  async cancel(id: string, reason: string, request?: string): Promise<void> {
    this.assertOpen();
    await this.onRun(id, request, (entry) => {
      this.unfinished(id);
      // A run that cannot go on would never see its cancellation: the caller hears why (terminate ends it).
      this.assertCanGoOn(entry);
      return appendPerforming(this.records, entry, { kind: "cancel", reason, at: this.deps.clock.now() }, request);
    });
  }

  reset(id: string, stepName: string, request?: string): Promise<void> {
    this.assertOpen();
    return this.replacement.reset(this.entryOf(id), stepName, request);
  }

  complete(token: string, value: unknown, request?: string): Promise<void> {
    this.assertOpen();
    return answerToken(this.tokens, token, { ok: true, value }, request);
  }

  fail(token: string, error: Error, request?: string): Promise<void> {
    this.assertOpen();
    return answerToken(this.tokens, token, { ok: false, error: error instanceof Error ? error : new FuseeError(String(error)) }, request);
  }

  async startChild(type: string, id: string, input: unknown, parent: ParentLink, request?: string): Promise<number> {
    this.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.held(checkWorkflowId(id, "child workflow ID"));
    await this.starts.begin(def, id, input, {}, undefined, { parent, ...requestField(request) });
    return (this.runs.get(id) as RunEntry).runId;
  }

  async listShard(shard: number, filter: ListFilter, limit: number): Promise<RunStatus[]> {
    this.assertOpen();
    if (!this.deps.owns(shard)) throw new ShardMovedError(`shard ${shard} is no longer held by this process; its next owner lists it`);
    checkFilter(filter);
    return listRuns(this.runs.values(), filter, limit, shard, (type) => this.deps.catalog.has(type));
  }

  /** The runs of every shard this process holds that match the filter, newest first. */
  listHeld(filter: ListFilter, limit: number): RunStatus[] {
    checkFilter(filter);
    return listRuns(this.runs.values(), filter, limit, undefined, (type) => this.deps.catalog.has(type));
  }

  async schedule(name: string, settings: ScheduleSettings, paused: boolean): Promise<void> {
    this.assertOpen();
    this.heldFlow("schedule", name);
    await this.flow.schedules.schedule(name, settings, paused);
  }

  async listSchedules(shard: number): Promise<ScheduleDescription[]> {
    this.assertOpen();
    if (!this.deps.owns(shard)) throw shardMoved(shard);
    return this.flow.schedules.list((name) => this.flow.shardOf("schedule", name), shard);
  }

  async scheduleOp(name: string, op: ScheduleOp, args: readonly number[]): Promise<unknown> {
    this.assertOpen();
    this.heldFlow("schedule", name);
    return this.flow.schedules.perform(name, op, args);
  }

  async debounce(type: string, key: string, input: unknown, rule: DebounceRule, eventId: string | undefined): Promise<string> {
    this.assertOpen();
    this.heldFlow("debounce", key);
    const debounce = rule.maxWaitMs === undefined ? Debounce.of(rule.delayMs) : Debounce.of(rule.delayMs).maxWait(rule.maxWaitMs);
    return this.flow.debouncer.debounce(this.deps.catalog.resolve(type).name, key, input, debounce, eventId);
  }

  async batch(type: string, key: string, event: unknown, rule: BatchRule, eventId: string | undefined): Promise<string> {
    this.assertOpen();
    this.heldFlow("batch", key);
    return this.flow.batcher.batch(this.deps.catalog.resolve(type).name, key, event, Batch.of(rule.size, rule.timeoutMs), eventId);
  }

  // ---- for the cluster ----

  /** Whether the current run of `id` holds a record that request `request` appended, or remembers one from a run it replaced. */
  async performedRequest(id: string, request: string): Promise<boolean> {
    this.assertOpen();
    await this.replacement.settled(id);
    const entry = this.runs.get(id);
    return entry !== undefined && performedRequest(this.deps.log, entry, request);
  }

  /**
   * Forgets the runs of a shard this process no longer holds: their index entries, executors and
   * timers; waiters on their results and updates hear `ShardMovedError` and ask the next owner.
   */
  forgetShard(shard: number): void {
    const moved = new ShardMovedError(`shard ${shard} is no longer held by this process; its runs continue on the shard's new owner`);
    this.cache.dropAll(moved, (entry) => entry.shard === shard);
    for (const entry of [...this.runs.values()]) {
      if (entry.shard !== shard) continue;
      this.runs.delete(entry.id);
      entry.clearTimers();
      this.results.reject(entry.id, moved);
      this.requests.outcomes.rejectWhere(
        (key) => key.startsWith(`${entry.id}\0`),
        () => moved,
      );
    }
    this.flow.forget(shard);
  }

  /**
   * Loads the runs of `shards` (of every shard, when undefined) into the index (see
   * {@link ShardLoading.load}); returns the shards whose records could not be loaded, with why.
   */
  recover(shards: readonly number[] | undefined, read?: OnePassRead): Promise<Map<number, unknown>> {
    return this.loading.load(shards, read);
  }

  /** Resumes every unfinished run whose type is registered, a bounded number at a time. */
  resumeAll(): void {
    this.cache.resume(this.runs.values());
  }

  // ---- lifecycle ----

  /** Whether the runs have nothing to do until time passes or a call arrives (see `Engine.idle`). */
  quiet(steps: boolean): boolean {
    if (
      this.records.unsynced > 0 ||
      this.cache.resumingRuns ||
      this.flow.writing ||
      this.timers.hasDue() ||
      this.deps.clock.hasDue?.() === true
    )
      return false;
    for (const entry of this.cache.entries()) {
      if (this.cache.loading(entry) || entry.executor?.busy(steps) === true) return false;
    }
    return true;
  }

  /** Nothing more is done: timers stop, waiters hear `error`, running steps are aborted. */
  close(error: Error): void {
    this.closed = true;
    this.timers.stop();
    this.flow.close();
    this.results.rejectAll(error);
    this.requests.outcomes.rejectAll(error);
    this.started.rejectAll(error);
    this.records.abandon(error);
    this.cache.dropAll(new CancelledError("the engine is shutting down; the step runs again when the engine reopens"));
    this.deps.telemetry?.close();
  }

  /** The error that stopped the runs (a failed storage), if any. */
  get failure(): Error | undefined {
    return this.fatal;
  }

  /** Makes the runs fatal on a storage failure, except one of a shard this process of a cluster no longer holds. */
  storageFailed(e: unknown, shard?: number): void {
    if (this.closed) return;
    // The shard's next owner resumes its runs (and its schedules and windows) from what is durable.
    const of = shard ?? (e instanceof StorageError ? e.shard : undefined);
    if ((of !== undefined && !this.deps.owns(of)) || e instanceof ShardMovedError) return;
    const error = e instanceof StorageError ? e : new StorageError(`storage failed: ${(e as Error)?.message ?? String(e)}`, { cause: e });
    if (this.fatal === undefined) {
      this.fatal = error;
      this.deps.emit({ kind: "shard-fatal", shard, error });
    }
    this.results.rejectAll(error);
    this.requests.outcomes.rejectAll(error);
    this.records.abandon(error);
  }

  assertOpen(): void {
    if (this.fatal) throw this.fatal;
    if (this.closed) throw new FuseeError("the engine is shut down");
  }

  // ---- internals ----

  private statusOf(entry: RunEntry): RunStatus {
    return statusOf(entry, (type) => this.deps.catalog.has(type));
  }

  /** Refuses a call on a run of a shard this process does not hold; the shard's owner performs it. */
  private held(id: string): string {
    const shard = shardOf(id, this.deps.log.shardCount);
    if (!this.deps.owns(shard)) throw shardMoved(shard);
    return id;
  }

  private heldFlow(family: "schedule" | "debounce" | "batch", name: string): void {
    const shard = this.flow.shardOf(family, name);
    if (!this.deps.owns(shard)) throw shardMoved(shard);
  }

  /**
   * Performs `call` on the entry of `id` once no replacement of its run is under way, calling it in
   * the same turn as that check, so no replacement begins before the records it appends; resolves
   * to `undefined` without calling it when the call performs `request` and the run (or one it
   * replaced) performed it already.
   */
  private async onRun<T>(id: string, request: string | undefined, call: (entry: RunEntry) => Promise<T>): Promise<T | undefined> {
    for (;;) {
      await this.replacement.settled(id);
      if (this.replacement.busy(id)) continue;
      const entry = this.entryOf(id);
      if (request !== undefined) {
        const runId = entry.runId;
        const done = await performedRequest(this.deps.log, entry, request);
        if (this.replacement.busy(id) || this.runs.get(id) !== entry || entry.runId !== runId) continue;
        if (done) return undefined;
      }
      return call(entry);
    }
  }

  /** Throws why the run cannot go on, when it cannot (see `stoppedReason`). */
  private assertCanGoOn(entry: RunEntry): void {
    const stopped = stoppedReason(entry, (type) => this.deps.catalog.has(type));
    if (stopped !== undefined) throw stopped;
  }

  private entryOf(id: string): RunEntry {
    this.held(id);
    const entry = this.runs.get(id);
    if (entry === undefined) throw new NotFoundError(`no workflow run has the ID '${id}'`);
    return entry;
  }

  private unfinished(id: string): RunEntry {
    const entry = this.entryOf(id);
    if (entry.finished !== undefined)
      throw new RejectedError(`run ${entry.runId} of ${id} has already finished (${entry.finished})`, { reason: "already-finished" });
    return entry;
  }

  /** The run's executor once every record delivered so far has been applied. */
  private async idleExecutor(entry: RunEntry): Promise<RunExecutor> {
    const executor = await this.cache.load(entry);
    await executor.whenIdle();
    return executor;
  }

  /** Applies a record of `entry`'s run `runId` that just became durable at `position`. */
  private durable(entry: RunEntry, runId: number, position: number, record: JournalRecord, body: Uint8Array): void {
    if (entry.runId !== runId) {
      // An update's outcome journaled by a run replaced meanwhile still answers its caller: the run
      // that replaced it remembers the outcome (or, after a crash, replays it from this record).
      if (record.kind === "update-result") this.requests.resolve(entry.id, record);
      return;
    }
    entry.durable = position + 1;
    // Workflow code sees exactly what a replay would: the record as read back, not the live objects.
    record = readBackRecord(record, body, this.deps.codec, { workflowId: entry.id, runId, position });
    this.index.apply(entry, record);
    noteRequest(entry, record);
    this.deps.telemetry?.recorded(entry, record);
    if (entry.executor !== undefined) entry.executor.deliver(position, record);
    // A parked run wakes once the last of its pending records is durable, so its replay sees them all.
    else if (entry.finished === undefined && wakesRun(record) && entry.durable === entry.appended && !this.replacement.busy(entry.id))
      void this.cache.load(entry).catch(() => undefined);
    if (record.kind === "finish") this.finishRun(entry, record);
    else if (record.kind === "update-result") this.requests.resolve(entry.id, record);
  }

  private finishRun(entry: RunEntry, record: FinishRecord): void {
    const unanswered = entry.executor?.unansweredUpdates() ?? [];
    this.cache.evict(entry, () =>
      record.error instanceof TerminatedError
        ? record.error
        : new CancelledError(`run ${entry.runId} of '${entry.id}' ended (${record.status}); its steps stop`),
    );
    this.results.resolve(entry.id, record);
    this.requests.finished(entry, unanswered);
    this.children.parentEnded(entry, record);
  }

  private executorChanged(entry: RunEntry, executor: RunExecutor): void {
    if (entry.executor !== executor) return;
    const broken = executor.broken;
    if (broken) {
      if (!this.reported.has(executor)) {
        this.reported.add(executor);
        this.stop(entry, broken);
      }
    } else if (entry.stopped !== undefined && !executor.replaying && executor.instance !== undefined) this.resume(entry);
    if (this.deps.telemetry !== undefined && executor.status() !== "running") this.deps.telemetry.idle(entry);
    this.cache.changed();
  }

  /**
   * The run cannot go on: callers waiting for its result hear why, operators are told, and the
   * reason is journaled once, so readers of the data directory see the run stopped too.
   */
  private stop(entry: RunEntry, reason: Error): void {
    if (entry.finished !== undefined || this.closed) return;
    this.results.reject(entry.id, reason);
    this.deps.emit(runStopped(entry, reason));
    if (entry.stopped?.message === reason.message) return;
    entry.stopped = reason;
    const code = reason instanceof FuseeError ? reason.code : "FUSEE_ERROR";
    void this.records
      .append(entry, { kind: "stopped", at: this.deps.clock.now(), code, message: reason.message })
      .catch((e: unknown) => this.internalAppendFailed(e, entry.shard));
  }

  /** A run found stopped went on (its code, registration or key was mended): journaled, so readers see it go on. */
  private resume(entry: RunEntry): void {
    entry.stopped = undefined;
    void this.records
      .append(entry, { kind: "resumed", at: this.deps.clock.now() })
      .catch((e: unknown) => this.internalAppendFailed(e, entry.shard));
  }

  /** A run's journal could not be read into an executor: a missing key stops the run; a storage failure is the storage's. */
  private unloadable(entry: RunEntry, error: unknown): void {
    if (error instanceof CodecError) this.stop(entry, error);
  }

  private runFailedToContinue(entry: RunEntry, runId: number, e: unknown): void {
    if (entry.runId !== runId || entry.finished !== undefined || this.closed) return;
    const error = e instanceof Error ? e : new FuseeError(String(e));
    void this.records
      .append(entry, { kind: "finish", status: "failed", error, at: this.deps.clock.now() })
      .catch((x: unknown) => this.internalAppendFailed(x, entry.shard));
  }

  /**
   * Timers cancelled, of an earlier run of the ID, or of an entry no longer indexed (its shard moved,
   * its retention passed) stay queued: only a pending timer of the current run fires.
   */
  private fireTimer(entry: RunEntry, seq: number, runId: number): void {
    if ((entry.runId | 0) !== runId || this.runs.get(entry.id) !== entry || !entry.hasTimer(seq) || this.closed) return;
    entry.clearTimer(seq);
    void this.records
      .append(entry, { kind: "fired", seq, at: this.deps.clock.now() })
      .catch((e: unknown) => this.internalAppendFailed(e, entry.shard));
  }

  /**
   * A record the engine appended on its own (a timer fired, a child started, a result) failed: a run
   * that finished meanwhile refuses it, which is no failure; anything else is the storage's.
   */
  private internalAppendFailed(e: unknown, shard: number): void {
    if (!(e instanceof RejectedError)) this.storageFailed(e, shard);
  }
}

/** Refuses a call on a shard this process no longer holds; the shard's next owner performs it. */
function shardMoved(shard: number): ShardMovedError {
  return new ShardMovedError(`shard ${shard} is no longer held by this process; its next owner performs the request`);
}
