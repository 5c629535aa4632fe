import { randomUUID } from "node:crypto";
import { FuseeError, ShutDownError } from "../core/errors.js";
import { checkId, checkName, shardOf, checkWorkflowId } from "../core/ids.js";
import { RunHandle } from "../client/run-handle.js";
import type { ListFilter, RunDetail, RunStatus, StartOptions } from "../client/types.js";
import { checkFilter } from "../journal/list-filter.js";
import { unwantedSignal, type WorkflowClass } from "../workflow/registry.js";
import { checkStartAttributes } from "../workflow/ctx.js";
import type { InputArgs, WorkflowInput as Input, WorkflowOutput as Output } from "../workflow/workflow-io.js";
import type { Config } from "./config.js";
import type { EngineEvent } from "./engine-events.js";
import type { EngineDescription, EngineOptions, IdleOptions } from "./engine-options.js";
import { EngineParts } from "./engine-parts.js";
import type { EngineEventListener } from "./event-bus.js";
import type { Batch, Debounce, EventOptions } from "./flow-rules.js";
import type { LimitSpec } from "./limits.js";
import { Schedule, type ScheduleOperations } from "./schedule-handle.js";
import type { ScheduleDescription } from "./schedule-runtime.js";
import { checkScheduleSpec, type ScheduleSpec } from "./schedule-spec.js";
import { checkFlowName } from "./system-streams.js";

export type { EngineDescription, EngineOptions, IdleOptions } from "./engine-options.js";

/**
 * The durable-execution engine: starts workflow runs, journals everything they do, and resumes them
 * after a restart. A facade: it checks what callers hand it and builds their handles; the runs
 * themselves are a run service (this process's, or in a cluster, each call's owner's).
 *
 * @example
 * const engine = await Engine.open(Config.local("./data"), { workflows: [Pay] });
 * const run = await engine.start(Pay, "pay-1", 700);
 * console.log(await run.result());
 * await engine.shutdown();
 */
export class Engine {
  private constructor(private readonly parts: EngineParts) {}

  /**
   * Opens (or creates) the engine's storage, rebuilds its index and resumes every unfinished run.
   * Resumed steps may begin before it returns: a step that calls the engine must wait for it (or the
   * workflows are left out here and given to {@link register} once the engine is held).
   */
  static async open(config: Config, options: EngineOptions = {}): Promise<Engine> {
    return new Engine(await EngineParts.open(config, options));
  }

  /**
   * Adds a listener of the engine's events: a fatal shard, a run that stopped (non-determinism, a
   * class that could not be constructed), a lease renewed late or lost. What opening the storage
   * reported came before any listener could be added: see `EngineOptions.onEvent` and
   * {@link recoveryEvents}. A listener runs on the engine's path and should not block.
   *
   * @example
   * engine.on("event", (e) => { if (e.kind === "run-stopped") pager.send(`${e.workflowId}: ${e.error.message}`); });
   */
  on(name: "event", listener: EngineEventListener): this {
    if (name !== "event") throw new FuseeError(`the engine emits "event" only; got ${JSON.stringify(name)}`);
    this.parts.events.add(listener);
    return this;
  }

  /** Removes a listener added with {@link on}. */
  off(name: "event", listener: EngineEventListener): this {
    if (name === "event") this.parts.events.remove(listener);
    return this;
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
    return this.parts.openEvents;
  }

  /**
   * Whether this process performs the calls on workflow ID `id` itself: always, unless the engine
   * shares its schema with a cluster and another process holds the ID's shard (calls are then
   * context to it, which costs a round trip through the database). Lets a router send calls to
   * the process that holds the run.
   */
  holdsRun(id: string): boolean {
    this.assertOpen();
    checkWorkflowId(id);
    return this.parts.owns(shardOf(id, this.parts.log.shardCount));
  }

  /** Registers workflow classes; runs of their types that were waiting for them resume. */
  register(...classes: WorkflowClass[]): this {
    for (const cls of classes) this.parts.catalog.register(cls);
    this.parts.local.resumeAll();
    return this;
  }

  /**
   * Starts a run of a workflow under an ID; resolves once its start is durable.
   *
   * @throws AlreadyExistsError when the ID's policy refuses another run.
   */
  async start<W extends WorkflowClass>(type: W, id: string, ...args: InputArgs<W, [options?: StartOptions]>): Promise<RunHandle<Output<W>>>;
  async start<R = unknown>(type: string, id: string, input?: unknown, options?: StartOptions): Promise<RunHandle<R>>;
  async start(type: WorkflowClass | string, id: string, input?: unknown, options: StartOptions = {}): Promise<RunHandle<unknown>> {
    this.assertOpen();
    const name = this.parts.catalog.resolve(type).name;
    checkStartAttributes(options, "start");
    await this.parts.service.start(name, checkWorkflowId(id), input, options);
    return this.run(id);
  }

  /**
   * Sends an update to the ID's run, starting the run first when the ID has none (one `start` record
   * carries the update). `idPolicy.running` decides for a running run: `"use-existing"` (the
   * default) updates it, `"fail"` refuses, `"terminate-existing"` starts a new run with the update.
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
    const name = this.parts.catalog.resolve(type).name;
    checkWorkflowId(id);
    checkName(update, "update name");
    checkStartAttributes(options, "start");
    const { updateId, ...start } = options;
    // The ID is chosen here, so an owner that performs the call again applies the update once.
    const result = await this.parts.service.updateWithStart(
      name,
      id,
      input,
      update,
      arg,
      start,
      updateId === undefined ? randomUUID() : checkId(updateId, "update ID"),
    );
    return { run: this.run<R>(id), result: result as U };
  }

  /**
   * Signals the ID's running run, or starts a run with `input` and the signal in one start record
   * when the ID has none running (a finished ID's next run follows `idPolicy.finished`).
   *
   * @example
   * await engine.signalWithStart(Cart, `cart-${user}`, { user }, "add", { sku: "pen" });
   */
  async signalWithStart<W extends WorkflowClass>(
    type: W,
    id: string,
    input: Input<W>,
    signal: string,
    arg?: unknown,
    options?: StartOptions,
  ): Promise<RunHandle<Output<W>>>;
  async signalWithStart<R = unknown>(
    type: string,
    id: string,
    input: unknown,
    signal: string,
    arg?: unknown,
    options?: StartOptions,
  ): Promise<RunHandle<R>>;
  async signalWithStart(
    type: WorkflowClass | string,
    id: string,
    input: unknown,
    signal: string,
    arg?: unknown,
    options: StartOptions = {},
  ): Promise<RunHandle<unknown>> {
    this.assertOpen();
    const def = this.parts.catalog.resolve(type);
    const name = def.name;
    checkWorkflowId(id);
    checkName(signal, "signal name");
    checkStartAttributes(options, "signalWithStart");
    const unwanted = unwantedSignal(def, signal, id);
    if (unwanted !== undefined) throw unwanted;
    await this.parts.service.signalWithStart(name, id, input, signal, arg, options);
    return this.run(id);
  }

  /** A handle on the ID's runs; it does not check that the ID exists. */
  run<R = unknown>(id: string): RunHandle<R> {
    return new RunHandle<R>(this.parts.service, id);
  }

  /** The status of the ID's run, or `undefined` when it has none. */
  status(id: string): Promise<RunStatus | undefined> {
    return this.parts.service.status(id);
  }

  /** The ID's run with its journal, or `undefined` when it has none. */
  describe(id: string): Promise<RunDetail | undefined> {
    return this.parts.service.describe(id);
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
    const b = this.parts.sealBudget;
    return {
      storage: this.parts.config.settings.storage.kind,
      shards: this.parts.log.shardCount,
      runs: this.parts.local.runs.size,
      liveRuns: this.parts.local.cache.size,
      ...(b === undefined
        ? {}
        : { codec: { algorithm: b.algorithm, encryptingKeyId: b.encryptingKeyId, keyIds: b.keyIds, sealed: b.counts(), limit: b.limit } }),
    };
  }

  /** Up to `limit` runs, most recently started first. */
  list(limit = 100): Promise<RunStatus[]> {
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
    // In a cluster, the runs of shards other processes hold are in their indexes: each owner lists its shard.
    return this.parts.routed !== undefined ? this.parts.routed.listAll(filter, limit) : this.parts.local.listHeld(filter, limit);
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
    this.parts.local.flows.declareLimit(name, spec);
  }

  /** Permits of the limit held right now (in a cluster, by this process's steps); `RejectedError` when no limit has that name. */
  limitInUse(name: string): number {
    return this.parts.local.flows.limitInUse(name);
  }

  /** Steps waiting for a permit of the limit (in a cluster, this process's); `RejectedError` when no limit has that name. */
  limitWaiting(name: string): number {
    return this.parts.local.flows.limitWaiting(name);
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
    const settings = checkScheduleSpec(name, spec, (w) => this.parts.catalog.resolve(w).name);
    await this.parts.service.schedule(name, settings, spec.paused === true);
    return new Schedule(this.scheduleOps, name);
  }

  /**
   * Every schedule (of every process, in a cluster), by name: spec, counts, next instants.
   *
   * @example
   * for (const s of await engine.listSchedules()) console.log(s.name, s.paused ? "paused" : s.nextTimes[0]);
   */
  async listSchedules(): Promise<ScheduleDescription[]> {
    this.assertOpen();
    const shards = await Promise.all(
      Array.from({ length: this.parts.log.shardCount }, (_, shard) => this.parts.service.listSchedules(shard)),
    );
    return shards.flat().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
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
    return new Schedule(this.scheduleOps, name);
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
  async debounce<W extends WorkflowClass>(
    type: W,
    key: string,
    input: Input<W>,
    rule: Debounce,
    options?: EventOptions,
  ): Promise<RunHandle<Output<W>>>;
  async debounce<R = unknown>(type: string, key: string, input: unknown, rule: Debounce, options?: EventOptions): Promise<RunHandle<R>>;
  async debounce(
    type: WorkflowClass | string,
    key: string,
    input: unknown,
    rule: Debounce,
    options: EventOptions = {},
  ): Promise<RunHandle<unknown>> {
    this.assertOpen();
    const name = this.parts.catalog.resolve(type).name;
    checkFlowName(key, "debounce key");
    const { delayMs, maxWaitMs } = rule.resolve();
    return new RunHandle(
      this.parts.service,
      await this.parts.service.debounce(name, key, input, { delayMs, maxWaitMs }, eventId(options)),
      true,
    );
  }

  /**
   * A batched event: the events of one key collect into a batch that becomes one run (input: the
   * events in arrival order) once it holds `size` events or `timeout` after its first event.
   * Resolves once the event is durable, with a handle on the batch's run (ID `"<key>#<n>"`).
   *
   * @example
   * const run = await engine.batch(Bulk, "tenant-1", { sku: "a" }, Batch.of(100, "2s"), { eventId: "evt-1" });
   */
  async batch<W extends WorkflowClass>(
    type: W,
    key: string,
    event: unknown,
    rule: Batch,
    options?: EventOptions,
  ): Promise<RunHandle<Output<W>>>;
  async batch<R = unknown>(type: string, key: string, event: unknown, rule: Batch, options?: EventOptions): Promise<RunHandle<R>>;
  async batch(
    type: WorkflowClass | string,
    key: string,
    event: unknown,
    rule: Batch,
    options: EventOptions = {},
  ): Promise<RunHandle<unknown>> {
    this.assertOpen();
    const name = this.parts.catalog.resolve(type).name;
    checkFlowName(key, "batch key");
    const { size, timeoutMs } = rule.resolve();
    return new RunHandle(this.parts.service, await this.parts.service.batch(name, key, event, { size, timeoutMs }, eventId(options)), true);
  }

  /** Answers the token a step of `ctx.awaitCompletion` sent: the waiting run goes on with `value`. */
  async complete(token: string, value?: unknown): Promise<void> {
    this.assertOpen();
    await this.parts.service.complete(token, value);
  }

  /** Answers the token of `ctx.awaitCompletion` with an error, thrown where the run waits. */
  async fail(token: string, error: unknown): Promise<void> {
    this.assertOpen();
    await this.parts.service.fail(token, error instanceof Error ? error : new FuseeError(String(error)));
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
    return this.parts.idle(options);
  }

  /** Stops timers and new work, waits until every acknowledged record is on disk, closes the storage. */
  async shutdown(): Promise<void> {
    await this.parts.close(new ShutDownError());
  }

  /** What schedule handles call, through the engine's run service. */
  private readonly scheduleOps: ScheduleOperations = {
    scheduleOp: (name, op, args) => this.parts.service.scheduleOp(name, op, args),
    updateSchedule: async (name, spec) => {
      this.assertOpen();
      const settings = checkScheduleSpec(name, spec, (w) => this.parts.catalog.resolve(w).name);
      // Only an existing schedule is updated: the describe is refused (NotFoundError) for a deleted one.
      await this.parts.service.scheduleOp(name, "describe", []);
      await this.parts.service.schedule(name, settings, false);
    },
  };

  private assertOpen(): void {
    this.parts.local.assertOpen();
  }
}

function eventId(options: EventOptions): string | undefined {
  return options.eventId === undefined ? undefined : checkId(options.eventId, "event ID");
}
