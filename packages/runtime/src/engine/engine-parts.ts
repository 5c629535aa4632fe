import { container as rootContainer } from "tsyringe";
import { systemClock, type Clock } from "../core/clock.js";
import type { Log } from "../storage/log.js";
import type { PostgresLog } from "../storage/postgres/index.js";
import { loadOtel } from "../telemetry/otel-api.js";
import type { ClusterNode } from "./cluster/node.js";
import { checkCodec, recordCodec } from "./codec-manifest.js";
import type { Config } from "./config.js";
import { type EngineEvent, openEvents } from "./engine-events.js";
import type { EngineOptions, IdleOptions } from "./engine-options.js";
import { EventBus } from "./event-bus.js";
import { joinCluster } from "./join-cluster.js";
import { LocalRuns } from "./local-runs.js";
import { openLog } from "./open-log.js";
import { createPayloadCodec } from "./payloads.js";
import { RetentionSweep } from "./retention.js";
import type { RoutedRuns } from "./routed-runs.js";
import { RunRecovery } from "./run-recovery.js";
import type { RunService } from "./run-service.js";
import { RunTelemetry } from "./run-telemetry.js";
import { SealBudget } from "./seal-budget.js";
import { WorkflowCatalog } from "./workflow-catalog.js";

/** How long a call context to another process of a cluster waits for its answer, by default. */
const DEFAULT_FORWARD_TIMEOUT_MS = 30_000;

/**
 * What an engine is made of, from its open to its shutdown: the storage, this process's runs and,
 * in a cluster, the node and the routed service over them, the cipher's seal budget, the event bus
 * and the retention sweep. {@link open} makes them in the order recovery needs (the codec checked
 * before anything is written, limits shared before any run resumes); {@link close} undoes it.
 * `Engine` checks what callers hand it and calls these parts.
 */
export class EngineParts {
  readonly catalog = new WorkflowCatalog();
  /** The runs of the shards this process holds. */
  readonly local: LocalRuns;
  /** Where calls go: `local`, or in a cluster the routed service over it (set while opening). */
  service: RunService;
  routed: RoutedRuns | undefined;
  cluster: ClusterNode | undefined;
  readonly time: Clock;
  /** The configured cipher, counting seals per key; `undefined` without `Config.codec`. */
  readonly sealBudget: SealBudget | undefined;
  readonly events: EventBus;
  /** What opening the storage reported. */
  openEvents: readonly EngineEvent[] = [];
  private closed = false;
  private retention: RetentionSweep | undefined;
  /** Ends this engine's attachment to a virtual clock. */
  private detachClock: (() => void) | undefined;

  private constructor(
    readonly config: Config,
    readonly log: Log,
    options: EngineOptions,
    telemetry: RunTelemetry | undefined,
    recovery: RunRecovery | undefined,
  ) {
    const s = config.settings;
    this.events = new EventBus(s.logger, options.onEvent);
    this.time = s.clock ?? systemClock;
    this.sealBudget = s.cipher === undefined ? undefined : new SealBudget(s.cipher);
    this.local = new LocalRuns({
      log,
      codec: createPayloadCodec(this.sealBudget),
      clock: this.time,
      catalog: this.catalog,
      container: options.container ?? rootContainer,
      cacheSize: s.cache,
      maxRecordBytes: s.maxPayloadBytes,
      keepHistory: s.keepHistory,
      idempotencyWindowMs: s.idempotencyWindowMs,
      owns: (shard) => this.owns(shard),
      leased: (shard) => this.cluster === undefined || this.cluster.leased(shard),
      emit: (event) => this.events.emit(event),
      logger: s.logger,
      telemetry,
      recovery,
    });
    this.service = this.local;
    for (const [name, spec] of Object.entries(options.limits ?? {})) this.local.flows.declareLimit(name, spec);
  }

  /** Opens (or creates) the storage, rebuilds the index and resumes every unfinished run. */
  static async open(config: Config, options: EngineOptions): Promise<EngineParts> {
    const s = config.settings;
    const otel = s.telemetry === false ? undefined : await loadOtel();
    // A local log tells the engine's index what its recovery keeps, so open reads the journals once.
    const recovery = s.storage.kind === "local" && options.recoveryPasses !== "two-pass" ? new RunRecovery() : undefined;
    const { log, local } = await openLog(s, options, recovery);
    let telemetry: RunTelemetry | undefined;
    if (otel !== undefined && s.telemetry !== false) {
      telemetry = RunTelemetry.create(otel, s.telemetry, {
        liveRuns: (): number => parts.local.cache.size,
        parkedRuns: (): number => parts.parkedRuns(),
        waitingPermits: (): Map<string, number> => parts.local.flows.waitingByLimit(),
      });
      if (telemetry !== undefined) log.observeCommits?.(telemetry);
    }
    const parts: EngineParts = new EngineParts(config, log, options, telemetry, recovery);
    const runs = parts.local;
    try {
      for (const cls of options.workflows ?? []) parts.catalog.register(cls);
      checkCodec(log, s.cipher, s.storage.kind === "local" ? s.storage.dir : "the engine's storage");
      if (local !== undefined) {
        await local.completeOpen();
        parts.openEvents = openEvents(local);
        for (const event of parts.openEvents) parts.events.emit(event);
      }
      if (s.storage.kind === "postgres") parts.followLeases(log as PostgresLog);
      await recordCodec(log, s.cipher);
      await parts.sealBudget?.load(log);
      if (s.storage.kind === "postgres" && s.storage.cluster === true) {
        // Limits are shared before any run resumes, so no step takes a permit of this process alone.
        const joined = await joinCluster(runs, log as PostgresLog, telemetry, s.storage.forwardTimeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS);
        parts.cluster = joined.cluster;
        parts.routed = joined.routed;
        parts.service = parts.routed;
      } else await runs.recover(undefined, recovery !== undefined && local !== undefined ? { recovery, log: local } : undefined);
    } catch (e) {
      await parts.cluster?.close();
      await log.close();
      throw e;
    }
    runs.resumeAll();
    runs.flows.open();
    parts.detachClock = parts.time.attach?.({ settle: (graceMs) => parts.settle(graceMs) });
    const retentionMs = s.retentionMs;
    if (retentionMs !== undefined) {
      parts.retention = new RetentionSweep({
        log,
        clock: parts.time,
        runs: runs.runs,
        retentionMs,
        owns: (shard) => parts.owns(shard),
        loading: (entry) => runs.cache.loading(entry),
        failed: (e) => runs.storageFailed(e),
        sweepEngineState: (cutoff) => runs.flows.sweep(cutoff),
      });
      parts.retention.start();
    }
    return parts;
  }

  /** Whether this process performs the calls on the runs of `shard`: always, outside a cluster. */
  owns(shard: number): boolean {
    return this.cluster === undefined || this.cluster.owns(shard);
  }

  /** See `Engine.idle`. */
  async idle(options: IdleOptions): Promise<void> {
    const steps = options.runningSteps !== "ignore";
    for (let turn = 0; ; turn++) {
      if (this.closed || this.local.failure !== undefined || options.signal?.aborted === true) return;
      // Quiet twice across a turn: a due timer or a commit scheduled in this turn runs on the next.
      if (this.local.quiet(steps)) {
        await nextTurn();
        if (this.local.quiet(steps)) return;
      }
      // Waiting on a sync or a step's I/O: poll gently once a few turns did not do it.
      await (turn < 64 ? nextTurn() : pause(1));
    }
  }

  /** Stops timers and new work, waits until every acknowledged record is on disk, closes the storage. */
  async close(error: Error): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.detachClock?.();
    this.retention?.stop();
    this.local.close(error);
    await this.cluster?.close();
    await this.sealBudget?.settle();
    await this.log.close();
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

  /** Unfinished runs of this process's index whose executor is not in memory. */
  private parkedRuns(): number {
    let n = 0;
    for (const entry of this.local.runs.values()) if (entry.finished === undefined && entry.executor === undefined) n++;
    return n;
  }

  /** Tells the listeners when a lease renewal runs late and when this process stops holding a shard. */
  private followLeases(log: PostgresLog): void {
    const owner = log.owner;
    log.onLeaseLate((lateMs, leaseMs) => this.events.emit({ kind: "lease-late", owner, lateMs, leaseMs }));
    log.onLost((shard, reason, error) => this.events.emit({ kind: "lease-lost", owner, shard, reason, error }));
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
