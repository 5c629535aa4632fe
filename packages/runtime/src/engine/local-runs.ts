import { CancelledError, FuseeError, NotFoundError, ShardMovedError, TerminatedError } from "../core/errors.js";
import { checkName, checkWorkflowId, shardOf } from "../core/ids.js";
import type { FinishRecord } from "../journal/records.js";
import type { ListFilter, RunDetail, RunStatus, StartOptions, UpdateStage } from "../client/types.js";
import type { Message } from "../workflow/messages.js";
import type { FlowService } from "./flow-service.js";
import { LocalRunParts, type LocalRunsDeps, type RunsCalls } from "./local-run-parts.js";
import { appendPerforming, requestField } from "./performed-requests.js";
import type { RunCache } from "./run-cache.js";
import type { RunEntry } from "./run-entry.js";
import { deliverMessage } from "./run-messages.js";
import type { RunRecords } from "./run-records.js";
import type { PerformsRequests } from "./run-routes.js";
import type { RequestContext, ParentLink, RunRouter, RunService } from "./run-service.js";
import type { RunTable } from "./run-table.js";
import type { OnePassRead } from "./shard-loading.js";
import { answerToken } from "./token-answers.js";

/**
 * The runs of the shards this process holds, and every call on them. In a cluster, calls on runs of
 * other shards never reach here (see `RoutedRuns`); one that does, because its shard moved
 * meanwhile, is refused with `ShardMovedError`, so its caller asks the shard's next owner. A call
 * that changes a run and answers another process's request (`RequestContext`) names the request in the
 * record it appends, so a next owner finds it performed.
 *
 * The work is the parts' (`LocalRunParts`, which makes them): this class answers each call of
 * {@link RunService} by handing it to the part that does it.
 */
export class LocalRuns implements RunRouter, PerformsRequests, RunsCalls {
  readonly runs: RunTable;
  readonly records: RunRecords;
  readonly cache: RunCache;
  /** Schedules, debounce windows, batches and limits. */
  readonly flows: FlowService;
  private readonly parts: LocalRunParts;
  /** Where calls on other runs go (a child's start, its closing, a schedule's runs): `RoutedRuns` in a cluster. */
  private routeTo: RunRouter = this;

  constructor(private readonly deps: LocalRunsDeps) {
    const parts = (this.parts = new LocalRunParts(deps, this));
    this.runs = parts.runs;
    this.records = parts.records;
    this.cache = parts.cache;
    this.flows = parts.flows;
  }

  /** Where the parts send calls on other runs (see {@link routeThrough}). */
  router(): RunRouter {
    return this.routeTo;
  }

  /** Sends calls on runs of other shards through `router` from now on. */
  routeThrough(router: RunRouter): void {
    this.routeTo = router;
  }

  // ---- RunService: runs ----

  async start(type: string, id: string, input: unknown, options: StartOptions, context?: RequestContext): Promise<void> {
    this.parts.state.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.parts.access.held(checkWorkflowId(id));
    await this.parts.starts.begin(def, id, input, options, undefined, requestField(context?.request));
  }

  /** Outside a cluster every start is performed here, at once: none waits for another process to perform it late. */
  startFenced(_fence: number, type: string, id: string, input: unknown, options: StartOptions): Promise<void> {
    return this.start(type, id, input, options);
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
    this.parts.state.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.parts.access.held(checkWorkflowId(id));
    const existing = this.runs.get(id);
    // A running run takes the update unless the ID policy says otherwise ("fail", "terminate-existing").
    const running = options.idPolicy?.running ?? "use-existing";
    if (existing !== undefined && existing.finished === undefined && running === "use-existing")
      return this.update(id, update, arg, updateId);
    return this.parts.requests.startWith(def, id, update, updateId, () =>
      this.parts.starts.begin(
        def,
        id,
        input,
        { ...options, idPolicy: { ...options.idPolicy, running } },
        { id: updateId, name: update, arg },
      ),
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
    this.parts.state.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.parts.access.held(checkWorkflowId(id));
    checkName(signal, "signal name");
    const existing = this.runs.get(id);
    if (existing !== undefined && existing.finished === undefined) return this.signal(id, signal, value, context);
    // One start record carries the signal, so no crash can leave the new run without it.
    await this.parts.starts.begin(def, id, input, options, undefined, {
      signal: { name: signal, value },
      ...requestField(context?.request),
    });
  }

  /** Applies a message another workflow sent, once per request (see `deliverMessage`). */
  deliver(target: string, message: Message, request: string): Promise<unknown> {
    this.parts.state.assertOpen();
    this.parts.access.held(checkWorkflowId(target));
    return deliverMessage(this, target, message, request);
  }

  /**
   * Not an async function: a caller holds this promise for each run it waits on (thousands at a
   * time), and an async frame suspended per run would add a generator, a promise and two closures.
   */
  awaitResult(id: string): Promise<unknown> {
    try {
      this.parts.access.held(id);
      const entry = this.runs.get(id);
      if (entry === undefined)
        throw new NotFoundError(`no workflow run has the ID '${id}': it never started, or its retention has passed and it was forgotten`);
      const answer = (finish: FinishRecord): unknown => resultOf(id, finish);
      if (entry.finished !== undefined) return this.records.finishRecordOf(entry).then(answer);
      this.parts.access.assertCanGoOn(entry);
      return this.parts.outcomes.results.wait(id).then(answer);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  async awaitStarted(id: string): Promise<void> {
    this.parts.state.assertOpen();
    this.parts.access.held(id);
    if (!this.runs.has(id)) await this.parts.started.wait(id);
  }

  async status(id: string): Promise<RunStatus | undefined> {
    this.parts.access.held(id);
    const entry = this.runs.get(id);
    return entry === undefined ? undefined : this.parts.access.status(entry);
  }

  async describe(id: string): Promise<RunDetail | undefined> {
    this.parts.access.held(id);
    const entry = this.runs.get(id);
    return entry === undefined ? undefined : { ...this.parts.access.status(entry), journal: await this.records.read(entry) };
  }

  signal(id: string, name: string, value: unknown, context?: RequestContext): Promise<void> {
    return this.parts.requests.signal(id, name, value, context?.request);
  }

  query(id: string, name: string, args: readonly unknown[]): Promise<unknown> {
    return this.parts.requests.query(id, name, args);
  }

  update(id: string, name: string, arg: unknown, updateId: string, stage: UpdateStage = "completed"): Promise<unknown> {
    return this.parts.requests.update(id, name, arg, updateId, stage);
  }

  async terminate(id: string, reason: string, context?: RequestContext): Promise<void> {
    this.parts.state.assertOpen();
    const request = context?.request;
    await this.parts.access.onRun(id, request, (entry) => {
      this.parts.access.unfinished(id);
      const error = new TerminatedError(`run ${entry.runId} of ${id} was terminated: ${reason}`);
      return appendPerforming(this.records, entry, { kind: "finish", status: "terminated", error, at: this.deps.clock.now() }, request);
    });
  }

  async cancel(id: string, reason: string, context?: RequestContext): Promise<void> {
    this.parts.state.assertOpen();
    const request = context?.request;
    await this.parts.access.onRun(id, request, (entry) => {
      this.parts.access.unfinished(id);
      // A run that cannot go on would never see its cancellation: the caller hears why (terminate ends it).
      this.parts.access.assertCanGoOn(entry);
      return appendPerforming(this.records, entry, { kind: "cancel", reason, at: this.deps.clock.now() }, request);
    });
  }

  reset(id: string, stepName: string, context?: RequestContext): Promise<void> {
    this.parts.state.assertOpen();
    return this.parts.replacement.reset(this.parts.access.entryOf(id), stepName, context?.request);
  }

  complete(token: string, value: unknown, context?: RequestContext): Promise<void> {
    this.parts.state.assertOpen();
    return answerToken(this.parts.tokens, token, { ok: true, value }, context?.request);
  }

  fail(token: string, error: Error, context?: RequestContext): Promise<void> {
    this.parts.state.assertOpen();
    const failure = error instanceof Error ? error : new FuseeError(String(error));
    return answerToken(this.parts.tokens, token, { ok: false, error: failure }, context?.request);
  }

  async startChild(type: string, id: string, input: unknown, parent: ParentLink, context?: RequestContext): Promise<number> {
    this.parts.state.assertOpen();
    const def = this.deps.catalog.resolve(type);
    this.parts.access.held(checkWorkflowId(id, "child workflow ID"));
    await this.parts.starts.begin(def, id, input, {}, undefined, { parent, ...requestField(context?.request) });
    return (this.runs.get(id) as RunEntry).runId;
  }

  async listShard(shard: number, filter: ListFilter, limit: number): Promise<RunStatus[]> {
    this.parts.state.assertOpen();
    this.parts.access.heldShard(shard);
    return this.parts.access.list(filter, limit, (s) => s === shard);
  }

  /**
   * The runs this process has that match the filter, newest first: of every shard, or of those
   * `held` names (a cluster's process may still have runs of a shard it let go, or is recovering).
   */
  listHeld(filter: ListFilter, limit: number, held: (shard: number) => boolean = () => true): RunStatus[] {
    return this.parts.access.list(filter, limit, held);
  }

  // ---- RunService: flow control ----

  readonly schedule: RunService["schedule"] = (name, settings, paused) => this.flows.schedule(name, settings, paused);
  readonly listSchedules: RunService["listSchedules"] = (shard) => this.flows.listSchedules(shard);
  readonly scheduleOp: RunService["scheduleOp"] = (name, op, args, request) => this.flows.scheduleOp(name, op, args, request);
  readonly debounce: RunService["debounce"] = (type, key, input, rule, eventId) => this.flows.debounce(type, key, input, rule, eventId);
  readonly batch: RunService["batch"] = (type, key, event, rule, eventId) => this.flows.batch(type, key, event, rule, eventId);

  // ---- for the cluster ----

  /** Whether the current run of `id` holds a record that request `request` appended, or remembers one from a run it replaced. */
  async performedRequest(id: string, request: string): Promise<boolean> {
    this.parts.state.assertOpen();
    return this.parts.access.performed(id, request);
  }

  /** Which shard of flow control a schedule's name, or a debounce or batch key, belongs to. */
  flowShardOf(family: "schedule" | "debounce" | "batch", name: string): number {
    return this.parts.flow.shardOf(family, name);
  }

  /**
   * Forgets the runs of a shard this process no longer holds: their index entries, executors and
   * timers; waiters on the shard's IDs (results, starts, updates) hear `ShardMovedError` and ask the next owner.
   */
  forgetShard(shard: number): void {
    const moved = new ShardMovedError(`shard ${shard} is no longer held by this process; its runs continue on the shard's new owner`);
    this.cache.dropAll(moved, (entry) => entry.shard === shard);
    const forgotten = [...this.runs.values()].filter((entry) => entry.shard === shard);
    // A reset or continue-as-new waiting for a run's records to settle would otherwise wait for ever.
    this.records.forget(shard, forgotten, moved);
    for (const entry of forgotten) {
      this.runs.delete(entry.id);
      entry.clearTimers();
    }
    // Chosen by ID, not by the runs forgotten: a caller waiting for an ID's first run (a debounce
    // window's, a batch's) has no run here, and only the next owner will see that run start.
    const ofShard = (id: string): boolean => shardOf(id, this.deps.log.shardCount) === shard;
    this.parts.outcomes.results.rejectWhere(ofShard, () => moved);
    this.parts.started.rejectWhere(ofShard, () => moved);
    this.parts.requests.rejectRuns(ofShard, moved);
    this.parts.flow.forget(shard);
  }

  /**
   * Loads the runs of `shards` (of every shard, when undefined) into the index (see
   * {@link ShardLoading.load}); returns the shards whose records could not be loaded, with why.
   */
  recover(shards: readonly number[] | undefined, read?: OnePassRead): Promise<Map<number, unknown>> {
    return this.parts.loading.load(shards, read);
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
      this.parts.flow.writing ||
      this.parts.timers.hasDue() ||
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
    this.parts.state.close();
    this.parts.timers.stop();
    this.parts.flow.close();
    this.parts.outcomes.results.rejectAll(error);
    this.parts.requests.outcomes.rejectAll(error);
    this.parts.started.rejectAll(error);
    this.records.abandon(error);
    // A running step hears a cancellation, as from any other abort: it runs again when the engine reopens.
    this.cache.dropAll(new CancelledError("the engine is shut down; the step runs again when the engine reopens"));
    this.deps.telemetry?.close();
  }

  /** The error that stopped the runs (a failed storage), if any. */
  get failure(): Error | undefined {
    return this.parts.state.failure;
  }

  /** Makes the runs fatal on a storage failure, except one of a shard this process of a cluster no longer holds. */
  storageFailed(e: unknown, shard?: number): void {
    const error = this.parts.state.storageFailed(e, shard);
    if (error === undefined) return;
    this.parts.outcomes.results.rejectAll(error);
    this.parts.requests.outcomes.rejectAll(error);
    this.records.abandon(error);
  }

  assertOpen(): void {
    this.parts.state.assertOpen();
  }
}

/** What awaiting a run's result gives for its finish record: its value, or its error thrown. */
function resultOf(id: string, finish: FinishRecord): unknown {
  if (finish.status === "ok") return finish.value;
  throw finish.error ?? new FuseeError(`run ${id} ended ${finish.status}`);
}
