import { randomInt, randomUUID } from "node:crypto";
import { container as rootContainer, type DependencyContainer } from "tsyringe";
import { systemClock, type Clock } from "../core/clock.js";
import {
  AlreadyExistsError,
  ConfigError,
  FuseeError,
  NotFoundError,
  RejectedError,
  CancelledError,
  ShardMovedError,
  TerminatedError,
  StorageError,
} from "../core/errors.js";
import { checkId, checkName, shardOf } from "../core/ids.js";
import { decodeRecord, encodeRecord, readRecordHeader, type PayloadCodec } from "../core/record-codec.js";
import type { ChildRecord, FinishRecord, JournalRecord, StartRecord, UpdateResultRecord } from "../core/records.js";
import { isFinished, type RunStatusValue } from "../core/status.js";
import { RunHandle } from "../client/run-handle.js";
import type { RunOperations } from "../client/run-operations.js";
import type { ListFilter, RunDetail, RunStatus, StartOptions, UpdateOptions } from "../client/types.js";
import type { FileLayer } from "../storage/file-layer.js";
import type { LocalLog } from "../storage/local-log.js";
import type { Log } from "../storage/log.js";
import type { PostgresLog } from "../storage/postgres/index.js";
import type { ClusterNode } from "./cluster/node.js";
import { ChildResults } from "./child-results.js";
import { RetentionSweep } from "./retention.js";
import { RunIndex } from "./run-index.js";
import type { ForwardedArgs, ForwardedKind, RequestOperations } from "./cluster/operations.js";
import { MemoryLog } from "../storage/memory-log.js";
import { definitionOf, type WorkflowClass, type WorkflowDefinition } from "../workflow/registry.js";
import { RunExecutor, type ChildRequest } from "../workflow/run-executor.js";
import { parseCompletionToken } from "../workflow/completion-token.js";
import type { Config } from "./config.js";
import { checkFilter, compileFilter } from "./list-filter.js";
import { checkCodec, recordCodec } from "./codec-manifest.js";
import { type EngineEvent, openEvents } from "./engine-events.js";
import { SealBudget } from "./seal-budget.js";
import { createPayloadCodec } from "./payloads.js";
import { type DurableSink, RecordWaiter } from "./record-waiter.js";
import { EngineRunHost, type RunHostEngine } from "./run-host.js";
import { RunEntry } from "./run-entry.js";
import { TimerQueue } from "./timer-queue.js";
import { Waiters } from "./waiters.js";
import { FlowControl } from "./flow-control.js";
import type { Batch, Debounce, EventOptions } from "./flow-rules.js";
import type { LimitSpec } from "./limits.js";
import { Schedule, type ScheduleOp } from "./schedule-handle.js";
import { checkScheduleSpec, type ScheduleSpec } from "./schedule-spec.js";
import { checkFlowName } from "./system-streams.js";

/** What {@link Engine.describeEngine} reports. */
export interface EngineDescription {
  readonly storage: "memory" | "local" | "postgres";
  readonly shards: number;
  /** Runs in this process's index (in a cluster, those of the shards it holds). */
  readonly runs: number;
  /** Runs whose executor is in memory (at most `Config.cache`). */
  readonly liveRuns: number;
  /** Present with `Config.codec`: the keys and the payloads each has sealed since the data was created. */
  readonly codec?: {
    readonly algorithm: string;
    readonly encryptingKeyId: string;
    readonly keyIds: readonly string[];
    readonly sealed: Readonly<Record<string, number>>;
    /** The most payloads one key may seal; the engine refuses to seal past it. */
    readonly limit: number;
  };
}

/** Options of {@link Engine.open}. */
export interface EngineOptions {
  /** Workflow classes to register at once (more with `engine.register`). */
  workflows?: readonly WorkflowClass[];
  /** The tsyringe container workflows are resolved from; the root container by default. */
  container?: DependencyContainer;
  /** Limits declared before any run resumes, so resumed steps find them (more with `engine.limit`). */
  limits?: Readonly<Record<string, LimitSpec>>;
  /**
   * Told of what opening the storage found and did, such as each cut recovery made; the same
   * events are kept by `engine.recoveryEvents()`.
   */
  onEvent?: (event: EngineEvent) => void;
  /**
   * @internal The file layer a local engine's log reads and writes through, for tests that make a
   * write or a sync fail under running workflows.
   */
  fileLayer?: FileLayer;
  /** @internal The log of a memory engine, for a test engine that restarts on the same data. */
  memoryLog?: MemoryLog;
}

type Input<W> = W extends WorkflowClass<infer I, any> ? I : unknown;
type Output<W> = W extends WorkflowClass<any, infer O> ? Awaited<O> : unknown;

// Runs resumed at once after open; the rest wait their turn so a large backlog cannot flood memory.
const RESUME_CONCURRENCY = 64;

/**
 * The durable-execution engine: starts workflow runs, journals everything they do, and resumes them
 * after a restart.
 *
 * @example
 * const engine = await Engine.open(Config.local("./data"), { workflows: [Pay] });
 * const run = await engine.start(Pay, "pay-1", 700);
 * console.log(await run.result());
 * await engine.shutdown();
 */
export class Engine implements RunOperations {
  private readonly types = new Map<string, WorkflowDefinition>();
  /** The registered definitions by class: a start by class looks its type up without reading metadata. */
  private readonly typesByClass = new Map<WorkflowClass, WorkflowDefinition>();
  private readonly index: RunIndex;
  /** Where appended run records go once durable (or failed). */
  private readonly sink: DurableSink;
  /** What every run's host asks of the engine. */
  private readonly hostEngine: RunHostEngine;
  private readonly runs: Map<string, RunEntry>;
  /** Runs with an executor in memory, least recently used first. */
  private readonly live = new Map<string, RunEntry>();
  private readonly results = new Waiters<string, FinishRecord>();
  private readonly starts = new Waiters<string, void>();
  private readonly updates = new Waiters<string, UpdateResultRecord>();
  private readonly timers: TimerQueue;
  private readonly time: Clock;
  private readonly codec: PayloadCodec;
  /** The configured cipher, counting seals per key; `undefined` without `Config.codec`. */
  private readonly sealBudget: SealBudget | undefined;
  private readonly container: DependencyContainer;
  private readonly cacheSize: number;
  private readonly maxRecordBytes: number;
  private closed = false;
  private fatal: Error | undefined;
  private retention: RetentionSweep | undefined;
  private resumeQueue: RunEntry[] = [];
  private resuming = 0;
  private readonly flow: FlowControl;
  private readonly childResults: ChildResults;
  /** Set when this process shares a PostgreSQL schema with others (`Config.postgres(url, { cluster: true })`). */
  private cluster: ClusterNode | undefined;
  /** Run records appended and not yet durable (or failed). */
  private unsynced = 0;
  /** Ends this engine's attachment to a virtual clock. */
  private detachClock: (() => void) | undefined;
  /** What opening the storage reported. */
  private openEvents: readonly EngineEvent[] = [];

  private constructor(
    private readonly config: Config,
    private readonly log: Log,
    options: EngineOptions,
  ) {
    const s = config.settings;
    this.time = s.clock ?? systemClock;
    this.sealBudget = s.cipher === undefined ? undefined : new SealBudget(s.cipher);
    this.codec = createPayloadCodec(this.sealBudget);
    this.container = options.container ?? rootContainer;
    this.cacheSize = s.cache;
    this.maxRecordBytes = s.maxPayloadBytes;
    this.timers = new TimerQueue(this.time, (id, seq, at) => this.fireTimer(id, seq, at));
    this.index = new RunIndex({
      codec: this.codec,
      armTimer: (until, id, seq) => {
        if (!this.closed) this.timers.add(until, id, seq);
      },
      recoverSystem: (shard, stream, body) => this.flow.recover(shard, stream, body),
    });
    this.runs = this.index.runs;
    this.sink = {
      durable: (entry, runId, position, record, body) => this.durable(entry, runId, position, record, body),
      failed: (e, shard) => {
        this.unsynced--;
        this.storageFailed(e, shard);
      },
    };
    this.hostEngine = {
      clock: this.time,
      closed: () => this.closed,
      append: (entry, record) => this.appendFromRun(entry, record),
      changed: (entry, executor) => this.executorChanged(entry, executor),
      acquire: (options) => this.flow.limits.acquire(options),
      startChild: (entry, request) => void this.startChildRun(entry, request),
      continueAsNew: (entry, runId, def, input) => {
        this.begin(def, entry.id, input, {}, undefined, {
          from: { runId, reason: "continue-as-new" },
          ...(entry.parent ? { parent: entry.parent } : {}),
        }).catch((e: unknown) => this.runFailedToContinue(entry, runId, e));
      },
      closeChild: (entry, childId, reason) => void this.closeChildRun(entry, childId, reason),
    };
    this.flow = new FlowControl({
      log,
      codec: this.codec,
      clock: this.time,
      maxRecordBytes: this.maxRecordBytes,
      runs: this,
      failed: (e) => this.storageFailed(e),
    });
    for (const [name, spec] of Object.entries(options.limits ?? {})) this.flow.limits.declare(name, spec);
    this.childResults = new ChildResults({
      runs: this.runs,
      remote: (id) => this.remote(id),
      closed: () => this.closed,
      now: () => this.time.now(),
      append: (entry, record) => this.append(entry, record),
      finishRecordOf: (entry) => this.finishRecordOf(entry),
      awaitResult: (id) => this.awaitResult(id),
      storageFailed: (e, shard) => this.internalAppendFailed(e, shard),
    });
  }

  /** Opens (or creates) the engine's storage, rebuilds its index and resumes every unfinished run. */
  static async open(config: Config, options: EngineOptions = {}): Promise<Engine> {
    const s = config.settings;
    let log: Log;
    let local: LocalLog | undefined;
    if (s.storage.kind === "memory") log = options.memoryLog ?? new MemoryLog(s.shards);
    else if (s.storage.kind === "postgres") {
      // Loaded on demand, like the file engine: only PostgreSQL users load the driver. One engine
      // process runs every shard, so it claims them all, unless it shares them with a cluster.
      const { openPostgresLog } = await import("../storage/postgres/index.js");
      const { url, schema, leaseMs, owner, cluster } = s.storage;
      log = await openPostgresLog({ url, schema, leaseMs, owner, shards: s.shards, claim: cluster === true ? "fair" : "all" });
    } else {
      // Loaded on demand: memory-only users never load the file engine. Recovery only decides
      // here; what it cuts is written once every check below has passed.
      const { prepareLocalLog } = await import("../storage/local-log.js");
      log = local = await prepareLocalLog({
        dir: s.storage.dir,
        shards: s.shards,
        flush: s.flush,
        repair: s.repair,
        ...(s.segmentBytes !== undefined ? { segmentBytes: s.segmentBytes } : {}),
        ...(options.fileLayer !== undefined ? { fileLayer: options.fileLayer } : {}),
      });
    }
    const engine = new Engine(config, log, options);
    try {
      for (const cls of options.workflows ?? []) engine.registerOne(cls);
      checkCodec(log, s.cipher, s.storage.kind === "local" ? s.storage.dir : "the engine's storage");
      if (local !== undefined) {
        await local.completeOpen();
        engine.openEvents = openEvents(local);
        for (const event of engine.openEvents) options.onEvent?.(event);
      }
      await recordCodec(log, s.cipher);
      await engine.sealBudget?.load(log);
      if (s.storage.kind === "postgres" && s.storage.cluster === true) {
        const { ClusterNode } = await import("./cluster/node.js");
        // Limits are shared before any run resumes, so no step takes a permit of this process alone.
        engine.cluster = await ClusterNode.join(engine, log as PostgresLog, { url: s.storage.url, schema: s.storage.schema }, (permits) =>
          engine.flow.limits.share(permits),
        );
      } else await engine.recover();
    } catch (e) {
      await engine.cluster?.close();
      await log.close();
      throw e;
    }
    engine.resumeAll();
    engine.flow.open();
    engine.detachClock = engine.time.attach?.({ settle: (graceMs) => engine.settle(graceMs) });
    const retentionMs = s.retentionMs;
    if (retentionMs !== undefined) {
      engine.retention = new RetentionSweep({
        log,
        clock: engine.time,
        runs: engine.runs,
        retentionMs,
        owns: (shard) => engine.cluster === undefined || engine.cluster.owns(shard),
        failed: (e) => engine.storageFailed(e),
        sweepEngineState: (cutoff) => engine.flow.sweep(cutoff),
      });
      engine.retention.start();
    }
    return engine;
  }

  /**
   * What opening the storage found and did, as told to `EngineOptions.onEvent`: each cut recovery
   * made, and a move of the data directory to the current format. Empty after a clean close, and
   * for memory and PostgreSQL storage.
   *
   * @example
   * for (const e of engine.recoveryEvents()) if (e.kind === "recovery-cut") console.warn(e.segment, e.offset, e.reason);
   */
  recoveryEvents(): readonly EngineEvent[] {
    return this.openEvents;
  }

  /**
   * Whether this process performs the calls on workflow ID `id` itself: always, unless the engine
   * shares its schema with a cluster and another process holds the ID's shard (calls are then
   * forwarded to it, which costs a round trip through the database). Lets a router send calls to
   * the process that holds the run.
   */
  holdsRun(id: string): boolean {
    this.assertOpen();
    checkId(id);
    return this.remote(id) === undefined;
  }

  /** Registers workflow classes; runs of their types that were waiting for them resume. */
  register(...classes: WorkflowClass[]): this {
    for (const cls of classes) this.registerOne(cls);
    this.resumeAll();
    return this;
  }

  /**
   * Starts a run of a workflow under an ID; resolves once its start is durable.
   *
   * @throws AlreadyExistsError when the ID's policy refuses another run.
   */
  async start<W extends WorkflowClass>(type: W, id: string, input: Input<W>, options?: StartOptions): Promise<RunHandle<Output<W>>>;
  async start<R = unknown>(type: string, id: string, input?: unknown, options?: StartOptions): Promise<RunHandle<R>>;
  async start(type: WorkflowClass | string, id: string, input?: unknown, options: StartOptions = {}): Promise<RunHandle<unknown>> {
    this.assertOpen();
    const def = this.resolveType(type);
    checkId(id);
    const away = this.remote(id);
    if (away !== undefined) await this.cluster!.forward(away, "start", [def.name, id, input, options]);
    else await this.begin(def, id, input, options, undefined);
    return new RunHandle(this, id);
  }

  /**
   * Sends an update to the ID's run, starting the run first when the ID has none (one `start` record
   * carries the update).
   */
  async updateWithStart<R = unknown, U = unknown>(
    type: WorkflowClass | string,
    id: string,
    input: unknown,
    update: string,
    arg: unknown,
    options: StartOptions & { updateId?: string } = {},
  ): Promise<{ run: RunHandle<R>; result: U }> {
    this.assertOpen();
    const def = this.resolveType(type);
    checkId(id);
    checkName(update, "update name");
    const updateId = options.updateId === undefined ? randomUUID() : checkId(options.updateId, "update ID");
    const run = new RunHandle<R>(this, id);
    const away = this.remote(id);
    if (away !== undefined) {
      return { run, result: (await this.cluster!.forward(away, "updateWithStart", [def.name, id, input, update, arg, { ...options, updateId }])) as U };
    }
    const existing = this.runs.get(id);
    // A running run takes the update unless the ID policy says otherwise ("fail", "terminate-existing").
    const running = options.idPolicy?.running ?? "use-existing";
    if (existing !== undefined && existing.finished === undefined && running === "use-existing") {
      return { run, result: (await this.update(id, update, arg, { id: updateId })) as U };
    }
    if (!def.updates.has(update)) {
      throw new RejectedError(`workflow ${def.name} has no update '${update}'; it has ${[...def.updates.keys()].map((n) => `'${n}'`).join(", ") || "none"}`);
    }
    const outcome = this.updates.wait(`${id}\0${updateId}`);
    try {
      await this.begin(def, id, input, { ...options, idPolicy: { ...options.idPolicy, running } }, { id: updateId, name: update, arg });
    } catch (e) {
      // Nothing was started: nobody will wait for the update's outcome.
      outcome.catch(() => undefined);
      throw e;
    }
    return { run, result: unwrapUpdate(await outcome) as U };
  }

  /** A handle on the ID's runs; it does not check that the ID exists. */
  run<R = unknown>(id: string): RunHandle<R> {
    return new RunHandle<R>(this, id);
  }

  /** The status of the ID's run, or `undefined` when it has none. */
  async status(id: string): Promise<RunStatus | undefined> {
    const away = this.remote(id);
    if (away !== undefined) return (await this.cluster!.forward(away, "status", [id])) as RunStatus | undefined;
    const entry = this.runs.get(id);
    return entry === undefined ? undefined : this.statusFromEntry(entry);
  }

  /** The ID's run with its journal, or `undefined` when it has none. */
  async describe(id: string): Promise<RunDetail | undefined> {
    const away = this.remote(id);
    if (away !== undefined) return (await this.cluster!.forward(away, "describe", [id])) as RunDetail | undefined;
    const entry = this.runs.get(id);
    if (entry === undefined) return undefined;
    return { ...this.statusFromEntry(entry), journal: await this.journalOf(entry) };
  }

  /**
   * The engine itself, where {@link describe} shows one run: its storage, shard count, the runs it
   * indexes and holds in memory, and, with `Config.codec`, the cipher's keys and the payloads each
   * key has sealed over the life of the data (the limit is the most one key may seal; rotate before).
   *
   * @example
   * const { codec } = engine.describeEngine();
   * if (codec && codec.sealed[codec.encryptingKeyId]! > codec.limit / 2) console.warn("rotate the key");
   */
  describeEngine(): EngineDescription {
    const b = this.sealBudget;
    return {
      storage: this.config.settings.storage.kind,
      shards: this.log.shardCount,
      runs: this.runs.size,
      liveRuns: this.live.size,
      ...(b === undefined
        ? {}
        : { codec: { algorithm: b.algorithm, encryptingKeyId: b.encryptingKeyId, keyIds: b.keyIds, sealed: b.counts(), limit: b.limit } }),
    };
  }

  /** Up to `limit` runs, most recently started first. */
  async list(limit = 100): Promise<RunStatus[]> {
    return this.listWhere({}, limit);
  }

  /**
   * Runs whose fields match the filter, most recently started first.
   *
   * @example
   * await engine.listWhere({ type: "Order", status: "failed", amount: { gte: 100 } }, 50);
   */
  async listWhere(filter: ListFilter, limit = 100): Promise<RunStatus[]> {
    this.assertOpen();
    checkFilter(filter);
    const out = this.listIndexed(filter, undefined);
    if (this.cluster !== undefined) {
      // The runs of shards other processes hold are in their indexes: each owner lists its shard.
      const away: number[] = [];
      for (let shard = 0; shard < this.log.shardCount; shard++) if (!this.cluster.owns(shard)) away.push(shard);
      const lists = await Promise.all(away.map((shard) => this.cluster!.forward(shard, "listShard", [shard, filter, limit]) as Promise<RunStatus[]>));
      for (const list of lists) out.push(...list);
    }
    return newestFirst(out, limit);
  }

  /** @internal Lists the runs of one shard this process of a cluster holds, for another process's `listWhere`. */
  async listShard(shard: number, filter: ListFilter, limit: number): Promise<RunStatus[]> {
    this.assertOpen();
    if (this.cluster !== undefined && !this.cluster.owns(shard)) {
      throw new ShardMovedError(`shard ${shard} is no longer held by this process; its next owner lists it`);
    }
    checkFilter(filter);
    return newestFirst(this.listIndexed(filter, shard), limit);
  }

  /** The indexed runs (of one shard, or all) that match the filter, in no order. */
  private listIndexed(filter: ListFilter, shard: number | undefined): RunStatus[] {
    const predicate = compileFilter(filter);
    const out: RunStatus[] = [];
    for (const entry of this.runs.values()) {
      if (shard !== undefined && entry.shard !== shard) continue;
      const field = (name: string): unknown => entryField(entry, name, () => this.statusFromEntry(entry).status);
      if (predicate(field)) out.push(this.statusFromEntry(entry));
    }
    return out;
  }

  /**
   * Declares a named limit on steps, or changes its spec. Steps that name it (`StepOptions.limit`)
   * take a permit before each attempt; waiting steps are served by `priority` (higher first), then
   * round-robin across `fairness` keys, then in arrival order.
   *
   * @example
   * engine.limit("stripe", { concurrent: 2, perSecond: 10 });
   */
  limit(name: string, spec: LimitSpec): void {
    this.flow.limits.declare(name, spec);
  }

  /** Permits of the limit held right now (in a cluster, by this process's steps); `RejectedError` when no limit has that name. */
  limitInUse(name: string): number {
    return this.flow.limits.inUse(name);
  }

  /** Steps waiting for a permit of the limit (in a cluster, this process's); `RejectedError` when no limit has that name. */
  limitWaiting(name: string): number {
    return this.flow.limits.waiting(name);
  }

  /**
   * Creates a durable schedule, or updates the spec of the schedule of that name (one schedule per
   * name, so calling this at every application start is safe). Each instant starts a run with the
   * ID `"<name>@<instantMs>"`.
   *
   * @example
   * const nightly = await engine.schedule("nightly", { workflow: Report, cron: "0 2 * * *", timezone: "Europe/Paris" });
   * await nightly.pause();
   */
  async schedule(name: string, spec: ScheduleSpec): Promise<Schedule> {
    this.assertOpen();
    checkFlowName(name, "schedule name");
    const settings = checkScheduleSpec(name, spec, (w) => this.resolveType(w).name);
    const away = this.flowRemote("schedule", name);
    if (away !== undefined) await this.cluster!.forward(away, "schedule", [name, { ...spec, workflow: settings.workflow }]);
    else await this.flow.schedules.schedule(name, settings, spec.paused === true);
    return new Schedule(this, name);
  }

  /**
   * A handle on the schedule of that name, without its spec (to pause, trigger or describe a schedule
   * another part of the application created). Nothing is read here: the handle's calls reject with
   * `NotFoundError` when no schedule has the name.
   *
   * @example
   * await engine.getSchedule("nightly").trigger();
   */
  getSchedule(name: string): Schedule {
    this.assertOpen();
    checkFlowName(name, "schedule name");
    return new Schedule(this, name);
  }

  /** @internal A schedule handle's operation, done by the process that holds the schedule's shard. */
  async scheduleOp(name: string, op: ScheduleOp, args: readonly number[]): Promise<unknown> {
    this.assertOpen();
    const away = this.flowRemote("schedule", name);
    if (away !== undefined) return this.cluster!.forward(away, "scheduleOp", [name, op, args]);
    const schedules = this.flow.schedules;
    switch (op) {
      case "describe":
        return schedules.get(name).describe();
      case "pause":
        return schedules.get(name).pause();
      case "resume":
        return schedules.get(name).resume();
      case "trigger":
        return schedules.get(name).trigger();
      case "backfill":
        return schedules.get(name).backfill(args[0] as number, args[1] as number);
      case "delete":
        return schedules.delete(name);
    }
  }

  /**
   * A debounced start: starts of one key within a window collapse into one run, started with the
   * latest input once the window has been quiet for the rule's delay (or reached its `maxWait`).
   * Resolves once the start is durable, with a handle on the window's run (ID `"<key>@<n>"`);
   * `handle.started()` resolves once the run exists.
   *
   * @example
   * const run = await engine.debounce(Reindex, "doc-1", { rev: 3 }, Debounce.of("150ms").maxWait("1s"), { eventId: "e-3" });
   * await run.started();
   */
  async debounce<W extends WorkflowClass>(type: W, key: string, input: Input<W>, rule: Debounce, options?: EventOptions): Promise<RunHandle<Output<W>>>;
  async debounce<R = unknown>(type: string, key: string, input: unknown, rule: Debounce, options?: EventOptions): Promise<RunHandle<R>>;
  async debounce(type: WorkflowClass | string, key: string, input: unknown, rule: Debounce, options: EventOptions = {}): Promise<RunHandle<unknown>> {
    this.assertOpen();
    const typeName = this.resolveType(type).name;
    const away = this.flowRemote("debounce", key);
    if (away !== undefined) {
      const { delayMs, maxWaitMs } = rule.resolve();
      return new RunHandle(this, (await this.cluster!.forward(away, "debounce", [typeName, key, input, { delayMs, maxWaitMs }, options.eventId])) as string);
    }
    return this.flow.debouncer.debounce(typeName, key, input, rule, options.eventId);
  }

  /**
   * A batched event: the events of one key collect into a batch that becomes one run (input: the
   * events in arrival order) once it holds `size` events or `timeout` after its first event.
   * Resolves once the event is durable, with a handle on the batch's run (ID `"<key>#<n>"`).
   *
   * @example
   * const run = await engine.batch(Bulk, "tenant-1", { sku: "a" }, Batch.of(100, "2s"), { eventId: "evt-1" });
   */
  async batch<W extends WorkflowClass>(type: W, key: string, event: unknown, rule: Batch, options?: EventOptions): Promise<RunHandle<Output<W>>>;
  async batch<R = unknown>(type: string, key: string, event: unknown, rule: Batch, options?: EventOptions): Promise<RunHandle<R>>;
  async batch(type: WorkflowClass | string, key: string, event: unknown, rule: Batch, options: EventOptions = {}): Promise<RunHandle<unknown>> {
    this.assertOpen();
    const typeName = this.resolveType(type).name;
    const away = this.flowRemote("batch", key);
    if (away !== undefined) {
      const { size, timeoutMs } = rule.resolve();
      return new RunHandle(this, (await this.cluster!.forward(away, "batch", [typeName, key, event, { size, timeoutMs }, options.eventId])) as string);
    }
    return this.flow.batcher.batch(typeName, key, event, rule, options.eventId);
  }

  /**
   * Resolves once the engine has nothing to do until time passes or a call arrives: every record
   * appended is durable and applied, workflow code has settled, no run waits to resume, no timer is
   * due, and no step attempt's code is running (`{ runningSteps: "ignore" }` does not wait for
   * those). Tests use it to wait for the effects of what they did; on a shut-down engine it
   * resolves at once.
   *
   * @example
   * await engine.run("order-1").signal("paid", true);
   * await engine.idle();
   * expect((await engine.status("order-1"))?.status).to.equal("suspended");
   */
  async idle(options: IdleOptions = {}): Promise<void> {
    const steps = options.runningSteps !== "ignore";
    for (let turn = 0; ; turn++) {
      if (this.closed || this.fatal !== undefined || options.signal?.aborted === true) return;
      // Quiet twice across a turn: a due timer or a commit scheduled in this turn runs on the next.
      if (this.quiet(steps)) {
        await nextTurn();
        if (this.quiet(steps)) return;
      }
      // Waiting on a sync or a step's I/O: poll gently once a few turns did not do it.
      await (turn < 64 ? nextTurn() : pause(1));
    }
  }

  /** For a virtual clock: idle, waiting for running step attempts no longer than `graceMs` of real time. */
  private async settle(graceMs: number): Promise<void> {
    if (graceMs <= 0) return this.idle({ runningSteps: "ignore" });
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), graceMs);
    try {
      await this.idle({ signal: stop.signal });
    } finally {
      clearTimeout(timer);
    }
    await this.idle({ runningSteps: "ignore" });
  }

  private quiet(steps: boolean): boolean {
    if (this.unsynced > 0 || this.resuming > 0 || this.flow.writing || this.timers.hasDue() || this.time.hasDue?.() === true) return false;
    if (this.resumeQueue.length > 0) return false;
    for (const entry of this.live.values()) {
      if (entry.loading !== undefined || entry.executor?.busy(steps) === true) return false;
    }
    return true;
  }

  /** Stops timers and new work, waits until every acknowledged record is on disk, closes the storage. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.detachClock?.();
    this.timers.stop();
    this.retention?.stop();
    this.flow.close();
    const error = new FuseeError("the engine was shut down");
    this.results.rejectAll(error);
    this.updates.rejectAll(error);
    this.starts.rejectAll(error);
    const stopping = new CancelledError("the engine is shutting down; the step runs again when the engine reopens");
    for (const entry of this.live.values()) {
      entry.executor?.abortSteps(stopping);
      entry.executor = undefined;
    }
    this.live.clear();
    await this.cluster?.close();
    await this.sealBudget?.settle();
    await this.log.close();
  }

  // ---- RunOperations (used by RunHandle) ----

  /** @internal */
  async awaitResult(id: string): Promise<unknown> {
    const away = this.remote(id);
    if (away !== undefined) return this.cluster!.forward(away, "awaitResult", [id]);
    const entry = this.runs.get(id);
    if (entry === undefined) {
      await this.awaitStarted(id);
      return this.awaitResult(id);
    }
    let finish: FinishRecord;
    if (entry.finished !== undefined) {
      finish = await this.finishRecordOf(entry);
    } else {
      if (entry.executor?.broken) throw entry.executor.broken;
      const waited = await this.results.wait(id).catch((e: unknown) => {
        // The run's shard moved to another process of the cluster: ask its new owner.
        if (e instanceof ShardMovedError) return undefined;
        throw e;
      });
      if (waited === undefined) return this.awaitResult(id);
      finish = waited;
    }
    if (finish.status === "ok") return finish.value;
    throw finish.error ?? new FuseeError(`run ${id} ended ${finish.status}`);
  }

  /** @internal */
  async awaitStarted(id: string): Promise<void> {
    this.assertOpen();
    const away = this.remote(id);
    if (away !== undefined) return void (await this.cluster!.forward(away, "awaitStarted", [id]));
    if (this.runs.has(id)) return;
    return this.starts.wait(id);
  }

  /** @internal */
  async statusOf(id: string): Promise<RunStatus> {
    const away = this.remote(id);
    if (away !== undefined) return (await this.cluster!.forward(away, "statusOf", [id])) as RunStatus;
    const entry = this.entryOf(id);
    return this.statusFromEntry(entry);
  }

  /** @internal */
  async detailOf(id: string): Promise<RunDetail> {
    const away = this.remote(id);
    if (away !== undefined) return (await this.cluster!.forward(away, "detailOf", [id])) as RunDetail;
    const entry = this.entryOf(id);
    return { ...this.statusFromEntry(entry), journal: await this.journalOf(entry) };
  }

  /** @internal */
  async signal(id: string, name: string, value: unknown): Promise<void> {
    this.assertOpen();
    const away = this.remote(id);
    if (away !== undefined) return void (await this.cluster!.forward(away, "signal", [id, name, value]));
    await this.deliverSignal(id, name, value, undefined);
  }

  private async deliverSignal(id: string, name: string, value: unknown, request: string | undefined): Promise<void> {
    const entry = this.entryOf(id);
    checkId(name, "signal name");
    if (entry.finished !== undefined) {
      throw new RejectedError(`run ${entry.runId} of ${id} has finished (${entry.finished}); signal '${name}' was not delivered`);
    }
    await this.append(entry, { kind: "signal", name, value, at: this.time.now(), ...requestField(request) });
  }

  /**
   * @internal The operations that change a run, performed for cluster request `request` (sent by
   * another process of the cluster): each names the request in the record it appends, so that when
   * this process dies before answering, the shard's next owner finds the request performed
   * ({@link performedRequest}) instead of performing it again. For a run of a shard this process
   * no longer holds they throw `ShardMovedError`, and the shard's next owner performs the request.
   */
  asRequest(request: string): RequestOperations {
    return {
      start: async (type, id, input, options) => {
        this.assertOpen();
        const def = this.resolveType(type);
        checkId(id);
        this.assertHeld(id);
        await this.begin(def, id, input, options, undefined, { request });
      },
      signal: async (id, name, value) => {
        this.assertOpen();
        this.assertHeld(id);
        await this.deliverSignal(id, name, value, request);
      },
      terminate: (id, reason) => this.terminateRun(id, reason, request),
      cancel: (id, reason) => this.cancelRun(id, reason ?? "cancel requested", request),
      reset: (id, step) => this.resetRun(id, step, request),
      complete: (token, value) => this.answer(token, { ok: true, value }, request),
      fail: (token, error) => this.answer(token, { ok: false, error: error instanceof Error ? error : new FuseeError(String(error)) }, request),
      startChild: async (type, id, input, parent) => {
        this.assertOpen();
        const def = this.resolveType(type);
        checkId(id, "child workflow ID");
        this.assertHeld(id);
        await this.begin(def, id, input, {}, undefined, { parent, request });
        return (this.runs.get(id) as RunEntry).runId;
      },
    };
  }

  /**
   * @internal Whether the current run of `id` holds a record that cluster request `request`
   * appended, by a process that died before answering it.
   */
  async performedRequest(id: string, request: string): Promise<boolean> {
    this.assertOpen();
    const entry = this.runs.get(id);
    if (entry === undefined) return false;
    for (const item of await this.log.read(entry.shard, entry.stream)) {
      if (readRecordHeader(item.body).request === request) return true;
    }
    return false;
  }

  /** @internal */
  async query(id: string, name: string, args: readonly unknown[]): Promise<unknown> {
    this.assertOpen();
    checkName(name, "query name");
    const away = this.remote(id);
    if (away !== undefined) return this.cluster!.forward(away, "query", [id, name, args]);
    const entry = this.entryOf(id);
    const executor = await this.load(entry);
    await executor.whenIdle();
    return executor.query(name, args);
  }

  /** @internal */
  async update(id: string, name: string, arg: unknown, options: UpdateOptions): Promise<unknown> {
    this.assertOpen();
    checkName(name, "update name");
    const away = this.remote(id);
    // The update's ID is chosen here, so an owner that performs the request again applies it once.
    if (away !== undefined) return this.cluster!.forward(away, "update", [id, name, arg, { ...options, id: options.id ?? randomUUID() }]);
    const entry = this.entryOf(id);
    const updateId = options.id === undefined ? randomUUID() : checkId(options.id, "update ID");
    const key = `${id}\0${updateId}`;
    // When the run's shard moves to another process of the cluster, its new owner knows the update by its ID.
    const moved = (e: unknown): Promise<UpdateResultRecord | undefined> => (e instanceof ShardMovedError ? Promise.resolve(undefined) : Promise.reject(e));
    const settle = (r: UpdateResultRecord | undefined): unknown => (r === undefined ? this.update(id, name, arg, { ...options, id: updateId }) : unwrapUpdate(r));
    const executor = await this.load(entry);
    await executor.whenIdle();
    const done = executor.updateOutcome(updateId);
    if (done !== undefined) return unwrapOutcome(done);
    if (executor.knowsUpdate(updateId)) return settle(await this.updates.wait(key).catch(moved));
    if (entry.finished !== undefined) {
      throw new RejectedError(`run ${entry.runId} of ${id} has finished (${entry.finished}); update '${name}' was not applied`);
    }
    executor.validateUpdate(name, arg);
    executor.claimUpdate(updateId);
    const outcome = this.updates.wait(key).catch(moved);
    try {
      await this.append(entry, { kind: "update", id: updateId, name, arg, at: this.time.now() });
    } catch (e) {
      // The update was not journaled; the storage failure that stopped it also rejects `outcome`.
      outcome.catch(() => undefined);
      throw e;
    }
    return settle(await outcome);
  }

  /** @internal */
  async terminate(id: string, reason: string): Promise<void> {
    return this.terminateRun(id, reason, undefined);
  }

  private async terminateRun(id: string, reason: string, request: string | undefined): Promise<void> {
    this.assertOpen();
    const away = this.remote(id);
    if (away !== undefined) return void (await this.forwardUnlessRequest(away, request, "terminate", [id, reason]));
    const entry = this.entryOf(id);
    if (entry.finished !== undefined) {
      throw new RejectedError(`run ${entry.runId} of ${id} has already finished (${entry.finished})`);
    }
    const error = new TerminatedError(`run ${entry.runId} of ${id} was terminated: ${reason}`);
    await this.append(entry, { kind: "finish", status: "terminated", error, at: this.time.now(), ...requestField(request) });
  }

  /** @internal */
  async cancel(id: string, reason = "cancel requested"): Promise<void> {
    return this.cancelRun(id, reason, undefined);
  }

  private async cancelRun(id: string, reason: string, request: string | undefined): Promise<void> {
    this.assertOpen();
    const away = this.remote(id);
    if (away !== undefined) return void (await this.forwardUnlessRequest(away, request, "cancel", [id, reason]));
    const entry = this.entryOf(id);
    if (entry.finished !== undefined) {
      throw new RejectedError(`run ${entry.runId} of ${id} has already finished (${entry.finished})`);
    }
    await this.append(entry, { kind: "cancel", reason, at: this.time.now(), ...requestField(request) });
  }

  /** @internal */
  async reset(id: string, stepName: string): Promise<void> {
    return this.resetRun(id, stepName, undefined);
  }

  private async resetRun(id: string, stepName: string, request: string | undefined): Promise<void> {
    this.assertOpen();
    const away = this.remote(id);
    if (away !== undefined) return void (await this.forwardUnlessRequest(away, request, "reset", [id, stepName]));
    const entry = this.entryOf(id);
    const def = this.types.get(entry.type);
    if (def === undefined) throw new NotFoundError(`workflow type '${entry.type}' of run '${id}' is not registered`);
    const journal = await this.journalOf(entry);
    const at = journal.findIndex((r) => r.kind === "step" && r.name === stepName);
    if (at < 0) {
      const names = [...new Set(journal.flatMap((r) => (r.kind === "step" ? [`'${r.name}'`] : [])))].join(", ") || "none";
      throw new RejectedError(`run ${entry.runId} of ${id} has no step '${stepName}' to reset to; its steps are ${names}`);
    }
    const { request: _startedBy, ...start } = journal[0] as StartRecord;
    const runId = entry.runId + 1;
    const now = this.time.now();
    const records: JournalRecord[] = [
      { ...start, runId, at: now, from: { runId: entry.runId, reason: "reset" }, ...requestField(request) },
      ...journal.slice(1, at),
      // Signals the old run received after the reset point reach the new run again.
      ...journal.slice(at).filter((r) => r.kind === "signal"),
    ];
    const bodies = records.map((r, position) => this.encode(id, runId, position, r));
    const previous = entry.stream;
    const parent = entry.parent;
    this.evict(entry, () => new CancelledError(`run ${entry.runId} of '${id}' was reset to step '${stepName}'; its steps stop`));
    entry.reset(def.name, runId, now);
    if (parent !== undefined) entry.parent = parent;
    const appended = records.map((r, i) => this.appendEncoded(entry, r, bodies[i] as Uint8Array));
    await Promise.all(appended);
    this.dropRun(entry.shard, previous);
    if (entry.executor === undefined && entry.finished === undefined) await this.load(entry);
  }

  /** Answers the token a step of `ctx.awaitCompletion` sent: the waiting run goes on with `value`. */
  async complete(token: string, value?: unknown): Promise<void> {
    await this.answer(token, { ok: true, value });
  }

  /** Answers the token of `ctx.awaitCompletion` with an error, thrown where the run waits. */
  async fail(token: string, error: unknown): Promise<void> {
    await this.answer(token, { ok: false, error: error instanceof Error ? error : new FuseeError(String(error)) });
  }

  private async answer(token: string, outcome: { ok: true; value: unknown } | { ok: false; error: Error }, request?: string): Promise<void> {
    this.assertOpen();
    const address = parseCompletionToken(token);
    const away = this.remote(address.workflowId);
    if (away !== undefined) {
      return void (await this.forwardUnlessRequest(away, request, outcome.ok ? "complete" : "fail", [token, outcome.ok ? outcome.value : outcome.error]));
    }
    const entry = this.runs.get(address.workflowId);
    if (entry === undefined) throw new RejectedError(`the token belongs to workflow '${address.workflowId}', which has no run`);
    if (entry.runId !== address.runId) {
      throw new RejectedError(`the token belongs to run ${address.runId} of '${entry.id}', which was replaced by run ${entry.runId}`);
    }
    if (entry.finished !== undefined) throw new RejectedError(`run ${entry.runId} of '${entry.id}' has finished (${entry.finished}); the token is no longer valid`);
    const executor = await this.load(entry);
    await executor.whenIdle();
    const state = executor.completionState(token);
    if (state === "used") throw new RejectedError(`the token of '${entry.id}' was already answered`);
    if (state === "unknown") {
      throw new RejectedError(`the token is not the one '${entry.id}' is waiting for (a token of an earlier attempt is stale)`);
    }
    executor.claimCompletion(token);
    await this.append(entry, { kind: "completion", token, ...outcome, at: this.time.now(), ...requestField(request) });
  }

  // ---- internals ----

  private registerOne(cls: WorkflowClass): void {
    const def = definitionOf(cls);
    const known = this.types.get(def.name);
    if (known !== undefined && known.cls !== cls) {
      throw new ConfigError(`two workflow classes are named '${def.name}' (${known.cls.name} and ${cls.name}); give one another name with @Workflow("...")`);
    }
    this.types.set(def.name, def);
    this.typesByClass.set(cls, def);
  }

  private resolveType(type: WorkflowClass | string): WorkflowDefinition {
    if (typeof type === "function") {
      const registered = this.typesByClass.get(type);
      if (registered !== undefined) return registered;
      const def = definitionOf(type);
      const known = this.types.get(def.name);
      if (known === undefined) this.registerOne(type);
      return this.types.get(def.name) as WorkflowDefinition;
    }
    const def = this.types.get(type);
    if (def === undefined) {
      const names = [...this.types.keys()].map((n) => `'${n}'`).join(", ") || "none";
      throw new NotFoundError(`no workflow type '${type}' is registered (registered: ${names}); pass its class to Engine.open or engine.register`);
    }
    return def;
  }

  /** The ID's shard when another process of the cluster holds it (operations on the run are forwarded there), else undefined. */
  private remote(id: string): number | undefined {
    if (this.cluster === undefined) return undefined;
    const shard = shardOf(id, this.log.shardCount);
    return this.cluster.owns(shard) ? undefined : shard;
  }

  private entryOf(id: string): RunEntry {
    const entry = this.runs.get(id);
    if (entry === undefined) throw new NotFoundError(`no workflow run has the ID '${id}'`);
    return entry;
  }

  /**
   * Sends an operation on a run of another process's shard to that process; an operation that is
   * itself a forwarded request is refused instead (its shard moved), for the next owner to perform.
   */
  private forwardUnlessRequest<K extends ForwardedKind>(shard: number, request: string | undefined, kind: K, args: ForwardedArgs[K]): Promise<unknown> {
    if (request !== undefined) throw requestShardMoved(shard);
    return this.cluster!.forward(shard, kind, args);
  }

  /** Refuses an operation forwarded to this process for a shard it no longer holds; its next owner performs it. */
  private assertHeld(id: string): void {
    const away = this.remote(id);
    if (away !== undefined) throw requestShardMoved(away);
  }

  /** The shard of a schedule's or a debounce or batch key's streams when another process of a cluster holds it. */
  private flowRemote(family: "schedule" | "debounce" | "batch", name: string): number | undefined {
    if (this.cluster === undefined) return undefined;
    const shard = this.flow.shardOf(family, name);
    return this.cluster.owns(shard) ? undefined : shard;
  }

  private assertOpen(): void {
    if (this.fatal) throw this.fatal;
    if (this.closed) throw new FuseeError("the engine is shut down");
  }

  private async begin(
    def: WorkflowDefinition,
    id: string,
    input: unknown,
    options: StartOptions,
    update: StartRecord["update"],
    lineage: Pick<StartRecord, "from" | "parent" | "request"> = {},
  ): Promise<"started" | "existing"> {
    let existing = this.runs.get(id);
    // The same call of the same parent run started this child before a crash lost the parent's record of it.
    if (existing !== undefined && lineage.parent !== undefined && sameLink(existing.parent, lineage.parent)) return "existing";
    if (existing !== undefined && lineage.from === undefined) {
      const policy = options.idPolicy ?? {};
      const running = policy.running ?? "fail";
      const finished = policy.finished ?? "allow";
      checkPolicy(running, ["fail", "use-existing", "terminate-existing"], "idPolicy.running");
      checkPolicy(finished, ["allow", "allow-if-failed", "refuse"], "idPolicy.finished");
      if (existing.finished === undefined) {
        if (running === "use-existing") return "existing";
        if (running === "fail") throw new AlreadyExistsError(`workflow ID '${id}' already has a running run (${existing.type} run ${existing.runId})`);
        await this.terminate(id, "replaced by a new run (idPolicy terminate-existing)");
        existing = this.runs.get(id);
      } else if (finished === "refuse" || (finished === "allow-if-failed" && existing?.finished === "ok")) {
        throw new AlreadyExistsError(`workflow ID '${id}' already had a run (${existing.type} run ${existing.runId}, ${existing.finished}) and idPolicy.finished is '${finished}'`);
      }
    }
    const runId = (existing?.runId ?? 0) + 1;
    const record: StartRecord = {
      kind: "start",
      at: this.time.now(),
      type: def.name,
      runId,
      seed: randomInt(0, 2 ** 32 - 1),
      input,
      ...(update ? { update } : {}),
      ...lineage,
    };
    const body = this.encode(id, runId, 0, record);
    // Everything below runs without yielding until the append is queued, so two starts of one ID
    // cannot both pass the checks above.
    if (this.runs.get(id) !== existing) throw new AlreadyExistsError(`workflow ID '${id}' was started concurrently`);
    const entry = existing ?? new RunEntry(id, shardOf(id, this.log.shardCount));
    const previous = existing?.stream;
    if (existing !== undefined) this.evict(existing, () => new CancelledError(`run ${existing.runId} of '${id}' was replaced by run ${runId}; its steps stop`));
    entry.reset(def.name, runId, record.at);
    if (lineage.parent !== undefined) entry.parent = lineage.parent;
    this.runs.set(id, entry);
    const executor = this.createExecutor(entry, def);
    executor.load([]);
    this.starts.resolve(id);
    await this.appendEncoded(entry, record, body);
    if (previous !== undefined) this.dropRun(entry.shard, previous);
    return "started";
  }

  /** Drops a superseded run's journal, unless finished journals are kept. */
  private dropRun(shard: number, stream: string): void {
    if (this.config.settings.keepHistory) return;
    void this.log.drop(shard, [stream]).catch((e: unknown) => this.storageFailed(e, shard));
  }

  private createExecutor(entry: RunEntry, def: WorkflowDefinition): RunExecutor {
    const host = new EngineRunHost(this.hostEngine, entry, entry.runId, def);
    const executor = new RunExecutor(def, this.container, host);
    host.executor = executor;
    entry.executor = executor;
    this.touch(entry);
    return executor;
  }

  private encode(id: string, runId: number, position: number, record: JournalRecord): Uint8Array {
    const body = encodeRecord(record, this.codec, { workflowId: id, runId, position });
    if (body.length > this.maxRecordBytes) {
      throw new RejectedError(
        `${record.kind} record of ${id} is ${body.length} bytes; the limit is ${this.maxRecordBytes} (Config.maxPayloadBytes)`,
      );
    }
    return body;
  }

  private append(entry: RunEntry, record: JournalRecord): Promise<void> {
    return this.appendEncoded(entry, record, this.encode(entry.id, entry.runId, entry.appended, record));
  }

  /**
   * Appends a record the run's code made (a step's outcome, a timer): an encoding error goes back to
   * the code, a storage failure makes the engine fatal. The hot path of every step, so it allocates
   * the record's waiter and nothing else (no promise).
   */
  private appendFromRun(entry: RunEntry, record: JournalRecord): void {
    // Nothing follows a finish (a termination may have come while a step ran).
    if (entry.finishAppended) return;
    const body = this.encode(entry.id, entry.runId, entry.appended, record);
    // A closed or failed engine journals nothing more; the failure has been reported already.
    if (this.fatal !== undefined || this.closed) return;
    this.enqueueRecord(entry, record, body, undefined, undefined);
  }

  /** Queues an encoded record at the next position of the entry's journal; resolves once durable. */
  private appendEncoded(entry: RunEntry, record: JournalRecord, body: Uint8Array): Promise<void> {
    try {
      this.assertOpen();
      if (entry.finishAppended) throw new RejectedError(`run ${entry.runId} of '${entry.id}' has finished; its journal takes no ${record.kind} record`);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => this.enqueueRecord(entry, record, body, resolve, reject));
  }

  /**
   * Every record of a run goes through here, so that the records of one run reach `durable` in
   * journal order whichever way they were appended.
   */
  private enqueueRecord(entry: RunEntry, record: JournalRecord, body: Uint8Array, resolve?: () => void, reject?: (e: unknown) => void): void {
    if (record.kind === "finish") entry.finishAppended = true;
    const waiter = new RecordWaiter(this.sink, entry, entry.runId, entry.appended++, record, body, resolve, reject);
    this.unsynced++;
    if (this.log.appendThen !== undefined) this.log.appendThen(entry.shard, entry.stream, body, waiter);
    else {
      this.log.append(entry.shard, { stream: entry.stream, body }).then(
        () => waiter.appended(),
        (e: unknown) => waiter.failed(e),
      );
    }
  }

  /** Applies a record of `entry`'s run `runId` that just became durable at `position`. */
  private durable(entry: RunEntry, runId: number, position: number, record: JournalRecord, body: Uint8Array): void {
    this.unsynced--;
    if (entry.runId !== runId) return;
    entry.durable = position + 1;
    // Workflow code sees exactly what a replay would: the record as read back, not the live objects.
    if (!readsBackUnchanged(record)) record = decodeRecord(body, this.codec, { workflowId: entry.id, runId, position });
    this.index.apply(entry, record);
    if (entry.executor !== undefined) entry.executor.deliver(position, record);
    // A parked run wakes once the last of its pending records is durable, so its replay sees them all.
    else if (entry.finished === undefined && wakes(record) && entry.durable === entry.appended) void this.load(entry).catch(() => undefined);
    if (record.kind === "finish") this.finishRun(entry, record);
    else if (record.kind === "update-result") this.updates.resolve(`${entry.id}\0${record.id}`, record);
  }

  private finishRun(entry: RunEntry, record: FinishRecord): void {
    this.evict(entry, () => (record.error instanceof TerminatedError ? record.error : new CancelledError(`run ${entry.runId} of '${entry.id}' ended (${record.status}); its steps stop`)));
    this.results.resolve(entry.id, record);
    this.childResults.finished(entry, record);
    for (const childId of [...(entry.children?.keys() ?? [])]) {
      void this.closeChildRun(entry, childId, `parent '${entry.id}' ended (${record.status})`);
    }
  }

  /** Starts the child a parent's call asked for and journals the outcome in the parent. */
  private async startChildRun(parent: RunEntry, request: ChildRequest): Promise<void> {
    const runId = parent.runId;
    const base = { kind: "child" as const, seq: request.seq, childId: request.id, at: 0 };
    let outcome: ChildRecord;
    let startedBefore = false;
    try {
      const def = this.resolveType(request.type);
      checkId(request.id, "child workflow ID");
      const link = { id: parent.id, runId, seq: request.seq };
      const away = this.remote(request.id);
      let childRunId: number;
      if (away !== undefined) {
        childRunId = (await this.cluster!.forward(away, "startChild", [def.name, request.id, request.input, link])) as number;
      } else {
        startedBefore = (await this.begin(def, request.id, request.input, {}, undefined, { parent: link })) === "existing";
        childRunId = (this.runs.get(request.id) as RunEntry).runId;
      }
      outcome = { ...base, ok: true, childRunId, close: request.close, at: this.time.now() };
    } catch (e) {
      outcome = { ...base, ok: false, error: e instanceof Error ? e : new FuseeError(String(e)), at: this.time.now() };
    }
    if (parent.runId !== runId || parent.finished !== undefined || this.closed) return;
    await this.append(parent, outcome).catch((e: unknown) => this.internalAppendFailed(e, parent.shard));
    if (!outcome.ok || this.runs.get(parent.id) !== parent) return;
    if (this.remote(request.id) !== undefined) this.childResults.watch(parent, request.id, request.seq);
    // A child that finished before the crash reports to no one now: its result is delivered here, once.
    else if (startedBefore && parent.executor?.hasChildResult(request.seq) !== true) await this.childResults.deliverIfFinished(parent, request.id, request.seq);
  }

  /** Applies a child's close policy: terminate it, ask it to cancel, or leave it running. */
  private async closeChildRun(parent: RunEntry, childId: string, reason: string): Promise<void> {
    const link = parent.children?.get(childId);
    parent.children?.delete(childId);
    if (link === undefined || this.closed) return;
    // A child another process holds is closed there; one that ended meanwhile refuses (RejectedError).
    const remote = this.remote(childId) !== undefined;
    const child = this.runs.get(childId);
    if (!remote && (child === undefined || child.runId !== link.runId || child.finished !== undefined)) return;
    try {
      if (link.close === "terminate") await this.terminate(childId, reason);
      else if (link.close === "request-cancel") await this.cancel(childId, reason);
    } catch (e) {
      if (!(e instanceof RejectedError)) this.storageFailed(e, child?.shard ?? shardOf(childId, this.log.shardCount));
    }
  }

  private runFailedToContinue(entry: RunEntry, runId: number, e: unknown): void {
    if (entry.runId !== runId || entry.finished !== undefined || this.closed) return;
    const error = e instanceof Error ? e : new FuseeError(String(e));
    void this.append(entry, { kind: "finish", status: "failed", error, at: this.time.now() }).catch((x: unknown) => this.internalAppendFailed(x, entry.shard));
  }

  private fireTimer(id: string, seq: number, at: number): void {
    const entry = this.runs.get(id);
    if (entry === undefined || entry.finished !== undefined || entry.timerDue(seq) !== at || this.closed) return;
    entry.clearTimer(seq);
    void this.append(entry, { kind: "fired", seq, at: this.time.now() }).catch((e: unknown) => this.internalAppendFailed(e, entry.shard));
  }

  /** The run's executor, replaying its journal from the log when it is parked. */
  private async load(entry: RunEntry): Promise<RunExecutor> {
    if (entry.loading !== undefined) return entry.loading;
    if (entry.executor !== undefined) {
      this.touch(entry);
      return entry.executor;
    }
    const def = this.types.get(entry.type);
    if (def === undefined) {
      throw new NotFoundError(`workflow type '${entry.type}' of run '${entry.id}' is not registered; pass its class to Engine.open or engine.register`);
    }
    const executor = this.createExecutor(entry, def);
    const upTo = entry.durable;
    const runId = entry.runId;
    entry.loading = (async () => {
      try {
        const records = await this.readJournal(entry, upTo);
        if (entry.runId !== runId) return executor;
        executor.load(records);
        return executor;
      } catch (e) {
        if (entry.executor === executor) this.evict(entry);
        throw e;
      } finally {
        entry.loading = undefined;
      }
    })();
    return entry.loading;
  }

  private async readJournal(entry: RunEntry, upTo: number): Promise<JournalRecord[]> {
    const entries = await this.log.read(entry.shard, entry.stream);
    const records: JournalRecord[] = [];
    for (let position = 0; position < Math.min(upTo, entries.length); position++) {
      const body = (entries[position] as { body: Uint8Array }).body;
      records.push(decodeRecord(body, this.codec, { workflowId: entry.id, runId: entry.runId, position }));
    }
    return records;
  }

  private async journalOf(entry: RunEntry): Promise<JournalRecord[]> {
    return this.readJournal(entry, entry.durable);
  }

  private async finishRecordOf(entry: RunEntry): Promise<FinishRecord> {
    const journal = await this.journalOf(entry);
    const last = journal[journal.length - 1];
    if (last?.kind !== "finish") throw new StorageError(`run ${entry.runId} of '${entry.id}' is finished but its journal has no finish record`);
    return last;
  }

  private statusFromEntry(entry: RunEntry): RunStatus {
    let status: RunStatusValue;
    let error: string | undefined;
    if (entry.finished !== undefined) status = entry.finished;
    else if (entry.executor !== undefined) {
      status = entry.executor.broken ? "running" : (entry.executor.status() as RunStatusValue);
      error = entry.executor.broken?.message;
      if (isFinished(status)) status = "running";
    } else {
      status = "parked";
      if (!this.types.has(entry.type)) error = `workflow type '${entry.type}' is not registered`;
    }
    return {
      id: entry.id,
      type: entry.type,
      runId: entry.runId,
      status,
      startedAt: entry.startedAt,
      ...(entry.endedAt !== undefined ? { endedAt: entry.endedAt } : {}),
      attributes: entry.attributes ?? {},
      ...(error !== undefined ? { error } : {}),
    };
  }

  private executorChanged(entry: RunEntry, executor: RunExecutor): void {
    if (entry.executor !== executor) return;
    if (executor.broken) this.results.reject(entry.id, executor.broken);
    this.evictIdle();
    // A run that came to wait may make room for one waiting to resume.
    if (this.resumeQueue.length > 0) this.pumpResume();
  }

  private touch(entry: RunEntry): void {
    this.live.delete(entry.id);
    this.live.set(entry.id, entry);
    if (this.live.size > this.cacheSize) this.evictIdle();
  }

  /** Parks the least recently used run that is only waiting; false when no live run is. */
  private parkOneIdle(): boolean {
    for (const entry of this.live.values()) {
      const ex = entry.executor;
      if (ex !== undefined && entry.loading === undefined && entry.durable === entry.appended && ex.status() === "suspended") {
        entry.executor = undefined;
        this.live.delete(entry.id);
        return true;
      }
    }
    return false;
  }

  /** Parks least recently used runs that are only waiting, until the cache fits. */
  private evictIdle(): void {
    if (this.live.size <= this.cacheSize) return;
    while (this.live.size > this.cacheSize && this.parkOneIdle());
    this.pumpResume();
  }

  /**
   * Drops the run's executor; the steps it still runs are aborted with `stop()` (their run ended or
   * was replaced), made only when there are any: a run's end is a hot path.
   */
  private evict(entry: RunEntry, stop?: () => Error): void {
    if (stop !== undefined && entry.executor?.runsSteps === true) entry.executor.abortSteps(stop());
    entry.executor = undefined;
    this.live.delete(entry.id);
    this.pumpResume();
  }

  private async recover(): Promise<void> {
    this.timers.hold();
    try {
      await this.scanShards();
    } finally {
      this.timers.release();
    }
    await this.childResults.reconcile(undefined);
    this.closeChildrenOfEnded(undefined);
  }

  /**
   * Applies the close policy to the children of parents that ended before a crash could: a
   * termination or cancel of a child another process or an earlier one never made durable.
   */
  private closeChildrenOfEnded(shards: ReadonlySet<number> | undefined): void {
    for (const entry of this.runs.values()) {
      if (entry.finished === undefined || entry.children === undefined || (shards !== undefined && !shards.has(entry.shard))) continue;
      for (const childId of [...entry.children.keys()]) void this.closeChildRun(entry, childId, `parent '${entry.id}' ended (${entry.finished})`);
    }
  }

  private async scanShards(): Promise<void> {
    for (let shard = 0; shard < this.log.shardCount; shard++) await this.scanShard(shard);
  }

  /**
   * @internal Loads the runs of shards this process of a cluster just took into the index and
   * resumes them.
   */
  async recoverShards(shards: readonly number[]): Promise<void> {
    this.assertOpen();
    this.timers.hold();
    try {
      // Each shard's records are applied in its own order; shards are independent, so their reads overlap.
      await Promise.all(shards.map((shard) => this.scanShard(shard)));
    } finally {
      this.timers.release();
    }
    const taken = new Set(shards);
    await this.childResults.reconcile(taken);
    this.closeChildrenOfEnded(taken);
    this.flow.open();
    this.resumeAll();
  }

  /**
   * @internal Forgets the runs of a shard this process of a cluster no longer holds: their index
   * entries, executors and timers; waiters on their results ask the shard's new owner.
   */
  forgetShard(shard: number): void {
    const moved = new ShardMovedError(`shard ${shard} is no longer held by this process; its runs continue on the shard's new owner`);
    for (const entry of [...this.runs.values()]) {
      if (entry.shard !== shard) continue;
      this.runs.delete(entry.id);
      this.live.delete(entry.id);
      entry.executor?.abortSteps(moved);
      entry.executor = undefined;
      entry.clearTimers();
      this.results.reject(entry.id, moved);
      this.updates.rejectWhere((key) => key.startsWith(`${entry.id}\0`), moved);
    }
    this.resumeQueue = this.resumeQueue.filter((entry) => entry.shard !== shard);
    this.flow.forget(shard);
  }

  private async scanShard(shard: number): Promise<void> {
    const superseded = new Set<string>();
    for await (const batch of this.log.scanBatches(shard)) {
      for (const item of batch) this.index.recover(shard, item, superseded);
    }
    for (const stream of superseded) this.dropRun(shard, stream);
  }

  /** Resumes unfinished runs whose types are registered, a bounded number at a time. */
  private resumeAll(): void {
    this.resumeQueue = [];
    for (const entry of this.runs.values()) {
      if (entry.finished === undefined && entry.executor === undefined && this.types.has(entry.type)) this.resumeQueue.push(entry);
    }
    this.pumpResume();
  }

  private pumpResume(): void {
    // The cache bounds the runs kept while they wait, not those with work to do: a run resumes even
    // when the cache is full (of runs whose steps run), and is parked again once it waits.
    while (!this.closed && this.resuming < RESUME_CONCURRENCY && this.resumeQueue.length > 0) {
      const entry = this.resumeQueue.shift() as RunEntry;
      if (entry.finished !== undefined || entry.executor !== undefined) continue;
      this.resuming++;
      void this.load(entry)
        .then((ex) => ex.whenIdle())
        .catch(() => undefined)
        .finally(() => {
          this.resuming--;
          this.pumpResume();
        });
    }
  }

  /**
   * A record the engine appended on its own (a timer fired, a child started, a result) failed: a run
   * that finished meanwhile refuses it, which is no failure; anything else is the storage's.
   */
  private internalAppendFailed(e: unknown, shard: number): void {
    if (!(e instanceof RejectedError)) this.storageFailed(e, shard);
  }

  /** Makes the engine fatal on a storage failure, except one of a shard this process of a cluster no longer holds. */
  private storageFailed(e: unknown, shard?: number): void {
    if (this.closed) return;
    // The shard's next owner resumes its runs (and its schedules and windows) from what is durable.
    if (this.cluster !== undefined && ((shard !== undefined && !this.cluster.owns(shard)) || e instanceof ShardMovedError)) return;
    const error = e instanceof StorageError ? e : new StorageError(`storage failed: ${(e as Error)?.message ?? String(e)}`, { cause: e });
    this.fatal ??= error;
    this.results.rejectAll(error);
    this.updates.rejectAll(error);
  }
}

/** Options of {@link Engine.idle}. */
export interface IdleOptions {
  /** `"wait"` (the default) waits for step attempts whose code runs; `"ignore"` does not. */
  readonly runningSteps?: "wait" | "ignore";
  /** Stops waiting (the promise resolves) once aborted. */
  readonly signal?: AbortSignal;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** True when decoding the record would give back equal values of the same types (no objects, no errors). */
function readsBackUnchanged(record: JournalRecord): boolean {
  switch (record.kind) {
    case "timer":
    case "fired":
    case "patch":
    case "cancel":
      return true;
    case "step":
      return record.ok && isPrimitive(record.value);
    case "signal":
      return isPrimitive(record.value);
    default:
      return false;
  }
}

function isPrimitive(v: unknown): boolean {
  return v === null || (typeof v !== "object" && typeof v !== "function" && typeof v !== "symbol");
}

function sameLink(a: RunEntry["parent"], b: NonNullable<RunEntry["parent"]>): boolean {
  return a !== undefined && a.id === b.id && a.runId === b.runId && a.seq === b.seq;
}

/** A field of `listWhere` read straight from an index entry; the status only when asked for. */
function entryField(entry: RunEntry, name: string, status: () => RunStatusValue): unknown {
  switch (name) {
    case "id":
      return entry.id;
    case "type":
      return entry.type;
    case "runId":
      return entry.runId;
    case "status":
      return entry.finished ?? status();
    case "startedAt":
      return entry.startedAt;
    case "endedAt":
      return entry.endedAt;
    default:
      return entry.attributes?.[name];
  }
}

function wakes(record: JournalRecord): boolean {
  return (
    record.kind === "signal" ||
    record.kind === "update" ||
    record.kind === "fired" ||
    record.kind === "cancel" ||
    record.kind === "completion" ||
    record.kind === "child" ||
    record.kind === "child-result"
  );
}

function unwrapOutcome(o: { ok: true; value: unknown } | { ok: false; error: unknown }): unknown {
  if (o.ok) return o.value;
  throw o.error;
}

function unwrapUpdate(r: UpdateResultRecord): unknown {
  if (r.ok) return r.value;
  throw r.error;
}

function checkPolicy(value: string, allowed: readonly string[], what: string): void {
  if (!allowed.includes(value)) throw new RejectedError(`${what} must be one of ${allowed.map((a) => `'${a}'`).join(", ")}; got '${value}'`);
}

/** The field a record carries when it performs a cluster request. */
function requestField(request: string | undefined): { request?: string } {
  return request === undefined ? {} : { request };
}

/** The first `limit` runs, most recently started first (ties by ID). */
function newestFirst(runs: RunStatus[], limit: number): RunStatus[] {
  runs.sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? -1 : 1));
  return runs.slice(0, Math.max(0, limit));
}

/** Refuses a forwarded request on a shard this process no longer holds; the shard's next owner performs it. */
function requestShardMoved(shard: number): ShardMovedError {
  return new ShardMovedError(`shard ${shard} is no longer held by this process; its next owner performs the request`);
}
