import type { DependencyContainer } from "tsyringe";
import type { Clock } from "../core/clock.js";
import { shardOf } from "../core/ids.js";
import type { Logger } from "../core/logger.js";
import type { PayloadCodec } from "../journal/record-codec.js";
import type { Log } from "../storage/log.js";
import { ChildRuns } from "./child-runs.js";
import { DurableRuns } from "./durable-runs.js";
import type { EngineEvent } from "./engine-events.js";
import { FlowControl } from "./flow-control.js";
import { FlowService } from "./flow-service.js";
import { appendPerforming } from "./performed-requests.js";
import { RunAccess } from "./run-access.js";
import { RunCache } from "./run-cache.js";
import type { RunEntry } from "./run-entry.js";
import type { RunHostEngine } from "./run-host.js";
import { RunIndex } from "./run-index.js";
import type { RunRecovery } from "./run-recovery.js";
import { RunRecords } from "./run-records.js";
import { RunReplacement } from "./run-replacement.js";
import { RunRequests } from "./run-requests.js";
import type { RequestContext, RunRouter } from "./run-service.js";
import { RunStarts } from "./run-starts.js";
import type { RunTelemetry } from "./run-telemetry.js";
import type { RunTable } from "./run-table.js";
import { RunsState } from "./runs-state.js";
import { ShardLoading } from "./shard-loading.js";
import { TimerQueue } from "./timer-queue.js";
import type { TokenAnswerDeps } from "./token-answers.js";
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

/** What the parts ask of the runs they make up: calls on runs, where calls on other runs go, failures. */
export interface RunsCalls {
  /** Where calls on other runs go (a child's start, its closing, a message): `RoutedRuns` in a cluster. */
  router(): RunRouter;
  terminate(id: string, reason: string, context?: RequestContext): Promise<void>;
  cancel(id: string, reason: string, context?: RequestContext): Promise<void>;
  /** Makes the runs fatal on a storage failure (see `LocalRuns.storageFailed`). */
  storageFailed(e: unknown, shard?: number): void;
  /** Forgets the runs of a shard this process no longer holds (see `LocalRuns.forgetShard`). */
  forgetShard(shard: number): void;
}

/**
 * The parts of one process's runs, each made once and wired to the others it needs: reaching runs
 * (`RunAccess`), their journals (`RunRecords`), what their durable records do (`DurableRuns`),
 * executors in memory (`RunCache`), new runs (`RunStarts`), replaced runs (`RunReplacement`),
 * callers' requests (`RunRequests`), children (`ChildRuns`), flow control (`FlowService`) and
 * loading shards (`ShardLoading`). A part added or rewired changes this file alone; `LocalRuns`
 * hands each call to the part that does it.
 */
export class LocalRunParts {
  readonly state: RunsState;
  readonly index: RunIndex;
  readonly runs: RunTable;
  readonly timers: TimerQueue<RunEntry>;
  readonly flow: FlowControl;
  readonly records: RunRecords;
  readonly cache: RunCache;
  readonly starts: RunStarts;
  readonly children: ChildRuns;
  readonly replacement: RunReplacement;
  readonly access: RunAccess;
  readonly requests: RunRequests;
  readonly tokens: TokenAnswerDeps;
  readonly outcomes: DurableRuns;
  /** Schedules, debounce windows, batches and limits. */
  readonly flows: FlowService;
  readonly loading: ShardLoading;
  /** Callers of `awaitStarted` waiting for a run of the ID. */
  readonly started = new Waiters<string, void>();

  constructor(deps: LocalRunsDeps, calls: RunsCalls) {
    const { clock, catalog, telemetry } = deps;
    const state = (this.state = new RunsState(deps.owns, deps.emit));
    const failed = (e: unknown, shard?: number): void => calls.storageFailed(e, shard);
    this.timers = new TimerQueue<RunEntry>(clock, (entry, seq, _at, runId) => this.outcomes.fireTimer(entry, seq, runId));
    this.flow = new FlowControl({
      log: deps.log,
      codec: deps.codec,
      clock,
      maxRecordBytes: deps.maxRecordBytes,
      runs: {
        start: (type, id, input, options, fence) => calls.router().startFenced(fence, type, id, input, options),
        awaitResult: (id) => calls.router().awaitResult(id),
        status: (id) => calls.router().status(id),
        terminate: (id, reason) => calls.router().terminate(id, reason),
        cancel: (id, reason) => calls.router().cancel(id, reason),
      },
      failed,
      holds: (shard) => deps.leased?.(shard) ?? true,
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
      host: this.runHost(deps, calls),
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
      terminate: (id, reason) => calls.terminate(id, reason),
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
        close === "terminate" ? calls.terminate(id, reason, context) : calls.cancel(id, reason, context),
      router: () => calls.router(),
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
      forgetShard: (shard) => calls.forgetShard(shard),
    });
  }

  /** What every run's host asks of the engine: one object for all runs. */
  private runHost(deps: LocalRunsDeps, calls: RunsCalls): RunHostEngine {
    const { telemetry } = deps;
    return {
      ...(telemetry === undefined
        ? {}
        : { observeAttempt: (entry: RunEntry, name: string, attempt: number) => telemetry.attempt(entry, name, attempt) }),
      clock: deps.clock,
      logger: deps.logger,
      closed: () => this.state.closed,
      holds: (shard) => deps.leased?.(shard) ?? true,
      append: (entry, record) => this.records.appendFromRun(entry, record),
      changed: (entry, executor) => this.outcomes.executorChanged(entry, executor),
      acquire: (options) => this.flow.limits.acquire(options),
      // Both settle their own failures; what escapes them fails the run's shard as storage does.
      startChild: (entry, request) => {
        this.children.start(entry, request).catch((e: unknown) => calls.storageFailed(e, entry.shard));
      },
      continueAsNew: (entry, runId, def, input, attributes, executor) =>
        this.replacement.continueAsNew(entry, runId, def, input, attributes, executor),
      closeChild: (entry, childId, reason) => {
        this.children.close(entry, childId, reason).catch((e: unknown) => calls.storageFailed(e, entry.shard));
      },
      deliver: (target, message, request) => calls.router().deliver(target, message, request),
    };
  }
}
