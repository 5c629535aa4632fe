import { RunTable } from "./run-table.js";
import type { DependencyContainer } from "tsyringe";
import type { Clock } from "../core/clock.js";
import { CancelledError, FuseeError, NotFoundError, ShardMovedError, TerminatedError } from "../core/errors.js";
import { checkName, checkWorkflowId, shardOf } from "../core/ids.js";
import type { Logger } from "../core/logger.js";
import type { PayloadCodec } from "../journal/record-codec.js";
import type { FinishRecord } from "../journal/records.js";
import type { ListFilter, RunDetail, RunStatus, StartOptions, UpdateStage } from "../client/types.js";
import type { Log } from "../storage/log.js";
import type { Message } from "../workflow/messages.js";
import { ChildRuns } from "./child-runs.js";
import { DurableRuns } from "./durable-runs.js";
import type { EngineEvent } from "./engine-events.js";
import { FlowControl } from "./flow-control.js";
import { FlowService } from "./flow-service.js";
import { appendPerforming, requestField } from "./performed-requests.js";
import { RunAccess } from "./run-access.js";
import { RunCache } from "./run-cache.js";
import type { RunEntry } from "./run-entry.js";
import type { RunHostEngine } from "./run-host.js";
import { RunIndex } from "./run-index.js";
import { deliverMessage } from "./run-messages.js";
import type { RunRecovery } from "./run-recovery.js";
import { RunRecords } from "./run-records.js";
import { RunReplacement } from "./run-replacement.js";
import { RunRequests } from "./run-requests.js";
import type { PerformsRequests } from "./run-routes.js";
import type { RequestContext, ParentLink, RunService } from "./run-service.js";
import { RunStarts } from "./run-starts.js";
import type { RunTelemetry } from "./run-telemetry.js";
import { RunsState } from "./runs-state.js";
import { type OnePassRead, ShardLoading } from "./shard-loading.js";
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
 * The runs of the shards this process holds, and every call on them. In a cluster, calls on runs of
 * other shards never reach here (see `RoutedRuns`); one that does, because its shard moved
 * meanwhile, is refused with `ShardMovedError`, so its caller asks the shard's next owner. A call
 * that changes a run and answers another process's request (`RequestContext`) names the request in the
 * record it appends, so a next owner finds it performed.
 *
 * The work is the parts': reaching runs (`RunAccess`), their journals (`RunRecords`), what their
 * durable records do (`DurableRuns`), executors in memory (`RunCache`), new runs (`RunStarts`),
 * replaced runs (`RunReplacement`), callers' requests (`RunRequests`), children (`ChildRuns`), flow
 * control (`FlowService`) and loading shards (`ShardLoading`). This class makes them, once each,
 * and answers each call of {@link RunService} by handing it to the part that does it.
 */
export class LocalRuns implements RunService, PerformsRequests {
  readonly runs: RunTable;
  readonly records: RunRecords;
  readonly cache: RunCache;
  /** Schedules, debounce windows, batches and limits. */
  readonly flows: FlowService;
  private readonly state: RunsState;
  private readonly index: RunIndex;
  private readonly timers: TimerQueue<RunEntry>;
  private readonly flow: FlowControl;
  private readonly access: RunAccess;
  private readonly outcomes: DurableRuns;
  private readonly children: ChildRuns;
  private readonly starts: RunStarts;
  private readonly started = new Waiters<string, void>();
  private readonly requests: RunRequests;
  private readonly loading: ShardLoading;
  private readonly replacement: RunReplacement;
  private readonly tokens: TokenAnswerDeps;
  /** Where calls on other runs go (a child's start, its closing, a schedule's runs): `RoutedRuns` in a cluster. */
  private router: RunService = this;

  constructor(private readonly deps: LocalRunsDeps) {
    const { clock, catalog, telemetry } = deps;
    const state = (this.state = new RunsState(deps.owns, deps.emit));
    const failed = (e: unknown, shard?: number): void => this.storageFailed(e, shard);
    this.timers = new TimerQueue<RunEntry>(clock, (entry, seq, _at, runId) => this.outcomes.fireTimer(entry, seq, runId));
    this.flow = new FlowControl({
      log: deps.log,
      codec: deps.codec,
      clock,
      maxRecordBytes: deps.maxRecordBytes,
      runs: {
        start: (type, id, input, options) => this.router.start(type, id, input, options),
        awaitResult: (id) => this.router.awaitResult(id),
        status: (id) => this.router.status(id),
        terminate: (id, reason) => this.router.terminate(id, reason),
        cancel: (id, reason) => this.router.cancel(id, reason),
      },
      failed,
    });
    this.index = new RunIndex(
      {
        codec: deps.codec,
        armTimer: (until, entry, seq) => {
          if (!state.closed) this.timers.add(until, entry, seq, entry.runId);
        },
        recoverSystem: (shard, stream, body) => this.flow.recover(shard, stream, body),
      },
      deps.recovery?.runs,
    );
    const runs = (this.runs = this.index.runs);
    this.records = new RunRecords({
      log: deps.log,
      codec: deps.codec,
      maxRecordBytes: deps.maxRecordBytes,
      keepHistory: deps.keepHistory,
      sink: { durable: (entry, runId, position, record, body) => this.outcomes.durable(entry, runId, position, record, body), failed },
      assertOpen: () => state.assertOpen(),
      stopped: () => state.stopped,
      failed,
    });
    this.cache = new RunCache({
      catalog,
      container: deps.container,
      size: deps.cacheSize,
      host: this.runHost(),
      read: (entry, upTo) => this.records.read(entry, upTo),
      closed: () => state.closed,
      unloadable: (entry, e) => this.outcomes.unloadable(entry, e),
    });
    this.starts = new RunStarts({
      runs,
      records: this.records,
      cache: this.cache,
      catalog,
      clock,
      shardCount: deps.log.shardCount,
      terminate: (id, reason) => this.terminate(id, reason),
      started: (id) => this.started.resolve(id),
      currentTrace: () => telemetry?.current(),
    });
    this.children = new ChildRuns({
      runs,
      records: this.records,
      now: () => clock.now(),
      closed: () => state.closed,
      replacing: (id) => this.replacement.busy(id),
      local: (id) => deps.owns(shardOf(id, deps.log.shardCount)),
      closeHere: (id, close, reason, context) =>
        close === "terminate" ? this.terminate(id, reason, context) : this.cancel(id, reason, context),
      router: () => this.router,
      begin: (def, id, input, parent, request) => {
        const from = runs.get(parent.id);
        const trace = from === undefined ? undefined : telemetry?.traceOf(from);
        return this.starts.begin(def, id, input, {}, undefined, { parent, ...(request ? { request } : {}), ...(trace ? { trace } : {}) });
      },
      resolve: (type) => catalog.resolve(type),
      failed,
    });
    this.replacement = new RunReplacement({
      records: this.records,
      cache: this.cache,
      catalog,
      clock,
      idempotencyWindowMs: deps.idempotencyWindowMs,
      begin: (def, id, input, attributes, lineage) =>
        this.starts.begin(def, id, input, attributes === undefined ? {} : { attributes }, undefined, lineage),
      closeChild: (entry, childId, reason) => this.children.close(entry, childId, reason),
      keepChildren: (entry) => this.children.adopt(entry),
      failed: (entry, runId, e) => this.outcomes.failedToContinue(entry, runId, e),
    });
    this.access = new RunAccess({ runs, log: deps.log, catalog, replacement: this.replacement, cache: this.cache, owns: deps.owns });
    this.requests = new RunRequests({ clock, records: this.records, telemetry, catalog, state, access: this.access });
    this.tokens = {
      access: this.access,
      append: (entry, record, request) => appendPerforming(this.records, entry, record, request),
      now: () => clock.now(),
    };
    this.outcomes = new DurableRuns({
      state,
      runs,
      index: this.index,
      records: this.records,
      cache: this.cache,
      requests: this.requests,
      children: this.children,
      replacement: this.replacement,
      codec: deps.codec,
      clock,
      telemetry,
      emit: deps.emit,
      storageFailed: failed,
    });
    this.flows = new FlowService({
      flow: this.flow,
      assertOpen: () => state.assertOpen(),
      heldShard: (shard) => this.access.heldShard(shard),
      typeName: (type) => catalog.resolve(type).name,
    });
    this.loading = new ShardLoading({
      log: deps.log,
      index: this.index,
      timers: this.timers,
      flow: this.flow,
      records: this.records,
      children: this.children,
      closed: () => state.closed,
      forgetShard: (shard) => this.forgetShard(shard),
    });
  }

  /** Sends calls on runs of other shards through `router` from now on. */
  routeThrough(router: RunService): void {
    this.router = router;
  }

  // ---- RunService: runs ----

  async start(type: string, id: string, input: unknown, options: StartOptions, context?: RequestContext): Promise<void> {
    this.state.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.access.held(checkWorkflowId(id));
    await this.starts.begin(def, id, input, options, undefined, requestField(context?.request));
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
    this.state.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.access.held(checkWorkflowId(id));
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
    context?: RequestContext,
  ): Promise<void> {
    this.state.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.access.held(checkWorkflowId(id));
    checkName(signal, "signal name");
    const existing = this.runs.get(id);
    if (existing !== undefined && existing.finished === undefined) return this.signal(id, signal, value, context);
    // One start record carries the signal, so no crash can leave the new run without it.
    await this.starts.begin(def, id, input, options, undefined, { signal: { name: signal, value }, ...requestField(context?.request) });
  }

  /** Applies a message another workflow sent, once per request (see `deliverMessage`). */
  deliver(target: string, message: Message, request: string): Promise<unknown> {
    this.state.assertOpen();
    this.access.held(checkWorkflowId(target));
    return deliverMessage(this, target, message, request);
  }

  /**
   * Not an async function: a caller holds this promise for each run it waits on (thousands at a
   * time), and an async frame suspended per run would add a generator, a promise and two closures.
   */
  awaitResult(id: string): Promise<unknown> {
    try {
      this.access.held(id);
      const entry = this.runs.get(id);
      if (entry === undefined)
        throw new NotFoundError(`no workflow run has the ID '${id}': it never started, or its retention has passed and it was forgotten`);
      const answer = (finish: FinishRecord): unknown => resultOf(id, finish);
      if (entry.finished !== undefined) return this.records.finishRecordOf(entry).then(answer);
      this.access.assertCanGoOn(entry);
      return this.outcomes.results.wait(id).then(answer);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  async awaitStarted(id: string): Promise<void> {
    this.state.assertOpen();
    this.access.held(id);
    if (!this.runs.has(id)) await this.started.wait(id);
  }

  async status(id: string): Promise<RunStatus | undefined> {
    this.access.held(id);
    const entry = this.runs.get(id);
    return entry === undefined ? undefined : this.access.status(entry);
  }

  async describe(id: string): Promise<RunDetail | undefined> {
    this.access.held(id);
    const entry = this.runs.get(id);
    return entry === undefined ? undefined : { ...this.access.status(entry), journal: await this.records.read(entry) };
  }

  signal(id: string, name: string, value: unknown, context?: RequestContext): Promise<void> {
    return this.requests.signal(id, name, value, context?.request);
  }

  query(id: string, name: string, args: readonly unknown[]): Promise<unknown> {
    return this.requests.query(id, name, args);
  }

  update(id: string, name: string, arg: unknown, updateId: string, stage: UpdateStage = "completed"): Promise<unknown> {
    return this.requests.update(id, name, arg, updateId, stage);
  }

  async terminate(id: string, reason: string, context?: RequestContext): Promise<void> {
    this.state.assertOpen();
    const request = context?.request;
    await this.access.onRun(id, request, (entry) => {
      this.access.unfinished(id);
      const error = new TerminatedError(`run ${entry.runId} of ${id} was terminated: ${reason}`);
      return appendPerforming(this.records, entry, { kind: "finish", status: "terminated", error, at: this.deps.clock.now() }, request);
    });
  }

  async cancel(id: string, reason: string, context?: RequestContext): Promise<void> {
    this.state.assertOpen();
    const request = context?.request;
    await this.access.onRun(id, request, (entry) => {
      this.access.unfinished(id);
      // A run that cannot go on would never see its cancellation: the caller hears why (terminate ends it).
      this.access.assertCanGoOn(entry);
      return appendPerforming(this.records, entry, { kind: "cancel", reason, at: this.deps.clock.now() }, request);
    });
  }

  reset(id: string, stepName: string, context?: RequestContext): Promise<void> {
    this.state.assertOpen();
    return this.replacement.reset(this.access.entryOf(id), stepName, context?.request);
  }

  complete(token: string, value: unknown, context?: RequestContext): Promise<void> {
    this.state.assertOpen();
    return answerToken(this.tokens, token, { ok: true, value }, context?.request);
  }

  fail(token: string, error: Error, context?: RequestContext): Promise<void> {
    this.state.assertOpen();
    const failure = error instanceof Error ? error : new FuseeError(String(error));
    return answerToken(this.tokens, token, { ok: false, error: failure }, context?.request);
  }

  async startChild(type: string, id: string, input: unknown, parent: ParentLink, context?: RequestContext): Promise<number> {
    this.state.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.access.held(checkWorkflowId(id, "child workflow ID"));
    await this.starts.begin(def, id, input, {}, undefined, { parent, ...requestField(context?.request) });
    return (this.runs.get(id) as RunEntry).runId;
  }

  async listShard(shard: number, filter: ListFilter, limit: number): Promise<RunStatus[]> {
    this.state.assertOpen();
    this.access.heldShard(shard);
    return this.access.list(filter, limit, shard);
  }

  /** The runs of every shard this process holds that match the filter, newest first. */
  listHeld(filter: ListFilter, limit: number): RunStatus[] {
    return this.access.list(filter, limit, undefined);
  }

  // ---- RunService: flow control ----

  readonly schedule: RunService["schedule"] = (name, settings, paused) => this.flows.schedule(name, settings, paused);
  readonly listSchedules: RunService["listSchedules"] = (shard) => this.flows.listSchedules(shard);
  readonly scheduleOp: RunService["scheduleOp"] = (name, op, args) => this.flows.scheduleOp(name, op, args);
  readonly debounce: RunService["debounce"] = (type, key, input, rule, eventId) => this.flows.debounce(type, key, input, rule, eventId);
  readonly batch: RunService["batch"] = (type, key, event, rule, eventId) => this.flows.batch(type, key, event, rule, eventId);

  // ---- for the cluster ----

  /** Whether the current run of `id` holds a record that request `request` appended, or remembers one from a run it replaced. */
  async performedRequest(id: string, request: string): Promise<boolean> {
    this.state.assertOpen();
    return this.access.performed(id, request);
  }

  /** Which shard of flow control a schedule's name, or a debounce or batch key, belongs to. */
  flowShardOf(family: "schedule" | "debounce" | "batch", name: string): number {
    return this.flow.shardOf(family, name);
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
      this.outcomes.results.reject(entry.id, moved);
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
    this.state.close();
    this.timers.stop();
    this.flow.close();
    this.outcomes.results.rejectAll(error);
    this.requests.outcomes.rejectAll(error);
    this.started.rejectAll(error);
    this.records.abandon(error);
    // A running step hears a cancellation, as from any other abort: it runs again when the engine reopens.
    this.cache.dropAll(new CancelledError("the engine is shut down; the step runs again when the engine reopens"));
    this.deps.telemetry?.close();
  }

  /** The error that stopped the runs (a failed storage), if any. */
  get failure(): Error | undefined {
    return this.state.failure;
  }

  /** Makes the runs fatal on a storage failure, except one of a shard this process of a cluster no longer holds. */
  storageFailed(e: unknown, shard?: number): void {
    const error = this.state.storageFailed(e, shard);
    if (error === undefined) return;
    this.outcomes.results.rejectAll(error);
    this.requests.outcomes.rejectAll(error);
    this.records.abandon(error);
  }

  assertOpen(): void {
    this.state.assertOpen();
  }

  // ---- wiring ----

  /** What every run's host asks of the engine: one object for all runs. */
  private runHost(): RunHostEngine {
    const { telemetry } = this.deps;
    return {
      ...(telemetry === undefined
        ? {}
        : { observeAttempt: (entry: RunEntry, name: string, attempt: number) => telemetry.attempt(entry, name, attempt) }),
      clock: this.deps.clock,
      logger: this.deps.logger,
      closed: () => this.state.closed,
      holds: (shard) => this.deps.leased?.(shard) ?? true,
      append: (entry, record) => this.records.appendFromRun(entry, record),
      changed: (entry, executor) => this.outcomes.executorChanged(entry, executor),
      acquire: (options) => this.flow.limits.acquire(options),
      // Both settle their own failures; what escapes them fails the run's shard as storage does.
      startChild: (entry, request) => {
        this.children.start(entry, request).catch((e: unknown) => this.storageFailed(e, entry.shard));
      },
      continueAsNew: (entry, runId, def, input, attributes, executor) =>
        this.replacement.continueAsNew(entry, runId, def, input, attributes, executor),
      closeChild: (entry, childId, reason) => {
        this.children.close(entry, childId, reason).catch((e: unknown) => this.storageFailed(e, entry.shard));
      },
      deliver: (target, message, request) => this.router.deliver(target, message, request),
    };
  }
}

/** What awaiting a run's result gives for its finish record: its value, or its error thrown. */
function resultOf(id: string, finish: FinishRecord): unknown {
  if (finish.status === "ok") return finish.value;
  throw finish.error ?? new FuseeError(`run ${id} ended ${finish.status}`);
}
