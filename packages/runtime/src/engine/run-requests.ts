import type { Clock } from "../core/clock.js";
import { RejectedError } from "../core/errors.js";
import { checkId, checkName } from "../core/ids.js";
import type { UpdateResultRecord } from "../journal/records.js";
import type { UpdateStage } from "../client/types.js";
import type { RunExecutor } from "../workflow/run-executor.js";
import { unwantedSignal, type WorkflowDefinition } from "../workflow/registry.js";
import { appendPerforming } from "./performed-requests.js";
import type { RunAccess } from "./run-access.js";
import type { RunsState } from "./runs-state.js";
import type { WorkflowCatalog } from "./workflow-catalog.js";
import type { RunEntry } from "./run-entry.js";
import type { RunRecords } from "./run-records.js";
import { type RunTelemetry, traceField } from "./run-telemetry.js";
import { Waiters } from "./waiters.js";

/** What the requests on a process's runs need of the runs that host them. */
export interface RunRequestsDeps {
  readonly clock: Clock;
  readonly records: RunRecords;
  readonly telemetry: RunTelemetry | undefined;
  readonly catalog: WorkflowCatalog;
  readonly state: Pick<RunsState, "assertOpen">;
  readonly access: Pick<RunAccess, "onRun" | "assertCanGoOn" | "idleExecutor" | "replacing">;
}

/**
 * What callers send to the runs one process holds: signals (journaled, refused once the run has
 * finished or when nothing takes them), queries (answered by the run's executor once it has caught
 * up), and updates (journaled once per update ID, each caller handed the outcome, which arrives
 * later as an `update-result` record).
 */
export class RunRequests {
  /** Callers waiting for an update's outcome, keyed by run ID and update ID. */
  readonly outcomes = new Waiters<string, UpdateResultRecord>();

  constructor(private readonly deps: RunRequestsDeps) {}

  signal(id: string, name: string, value: unknown, request?: string): Promise<void> {
    const t = this.deps.telemetry;
    return t === undefined
      ? this.signalRun(id, name, value, request)
      : t.request("signal", name, id, () => this.signalRun(id, name, value, request));
  }

  private async signalRun(id: string, name: string, value: unknown, request: string | undefined): Promise<void> {
    this.deps.state.assertOpen();
    checkName(name, "signal name");
    await this.deps.access.onRun(id, request, (entry) => {
      if (entry.finished !== undefined) {
        throw new RejectedError(`run ${entry.runId} of ${id} has finished (${entry.finished}); signal '${name}' was not delivered`, {
          reason: "already-finished",
        });
      }
      // A run that cannot go on would never apply the signal: refused with why.
      this.deps.access.assertCanGoOn(entry);
      const def = this.deps.catalog.get(entry.type);
      const unwanted = def === undefined ? undefined : unwantedSignal(def, name, id);
      if (unwanted !== undefined) throw unwanted;
      return appendPerforming(
        this.deps.records,
        entry,
        { kind: "signal", name, value, at: this.deps.clock.now(), ...traceField(this.deps.telemetry) },
        request,
      );
    });
  }

  query(id: string, name: string, args: readonly unknown[]): Promise<unknown> {
    const t = this.deps.telemetry;
    return t === undefined ? this.queryRun(id, name, args) : t.request("query", name, id, () => this.queryRun(id, name, args));
  }

  private async queryRun(id: string, name: string, args: readonly unknown[]): Promise<unknown> {
    this.deps.state.assertOpen();
    checkName(name, "query name");
    const executor = (await this.deps.access.onRun(id, undefined, (entry) => this.deps.access.idleExecutor(entry))) as RunExecutor;
    return executor.query(name, args);
  }

  /** Applies update `updateId`, or answers from its earlier outcome; resolves at `stage`. */
  update(id: string, name: string, arg: unknown, updateId: string, stage: UpdateStage = "completed"): Promise<unknown> {
    const t = this.deps.telemetry;
    return t === undefined
      ? this.updateRun(id, name, arg, updateId, stage)
      : t.request("update", name, id, () => this.updateRun(id, name, arg, updateId, stage));
  }

  /**
   * Starts a run (through `begin`) whose start record carries update `updateId`, and waits for the
   * update's outcome.
   */
  async startWith(def: WorkflowDefinition, id: string, update: string, updateId: string, begin: () => Promise<unknown>): Promise<unknown> {
    if (!def.updates.has(update)) {
      throw new RejectedError(
        `workflow ${def.name} has no update '${update}'; it has ${[...def.updates.keys()].map((n) => `'${n}'`).join(", ") || "none"}`,
        { reason: "unknown-update" },
      );
    }
    const outcome = this.outcomeOf(id, updateId);
    // The outcome may fail (a storage failure rejects every waiter) before the start does; it is
    // awaited only once the start is durable, and nobody awaits it if the start fails.
    outcome.catch(() => undefined);
    await begin();
    return unwrap(await outcome);
  }

  /**
   * Waits for the outcome of an update. The promise counts as handled from the start: callers
   * await it only after the update's record is journaled, and a shard lost meanwhile rejects it
   * (see `LocalRuns.forgetShard`), which must reach the caller, not end the process.
   */
  outcomeOf(id: string, updateId: string): Promise<UpdateResultRecord> {
    const outcome = this.outcomes.wait(key(id, updateId));
    outcome.catch(() => undefined);
    return outcome;
  }

  /** An update's result became durable. */
  resolve(id: string, record: UpdateResultRecord): void {
    this.outcomes.resolve(key(id, record.id), record);
  }

  /** Callers of the updates of the runs `which` selects hear `error` (their shard was let go). */
  rejectRuns(which: (id: string) => boolean, error: unknown): void {
    this.outcomes.rejectWhere(
      (k) => which(k.slice(0, k.indexOf("\0"))),
      () => error,
    );
  }

  /** The run of the entry finished: callers of the updates it accepted (`ids`) and never answered hear so. */
  finished(entry: RunEntry, ids: readonly string[]): void {
    for (const updateId of ids) this.outcomes.reject(key(entry.id, updateId), endedFirst(entry, undefined, updateId));
  }

  private async updateRun(id: string, name: string, arg: unknown, updateId: string, stage: UpdateStage): Promise<unknown> {
    this.deps.state.assertOpen();
    checkName(name, "update name");
    checkId(updateId, "update ID");
    let entry: RunEntry;
    let executor: RunExecutor;
    // The update goes to the run that is current once its executor caught up; a replacement that
    // began meanwhile is waited out, and the update goes to the next run.
    do {
      [entry, executor] = (await this.deps.access.onRun(
        id,
        undefined,
        async (e) => [e, await this.deps.access.idleExecutor(e)] as const,
      )) as [RunEntry, RunExecutor];
    } while (this.deps.access.replacing(id) || entry.executor !== executor);
    const done = executor.updateOutcome(updateId);
    if (done !== undefined) return stage === "accepted" ? undefined : unwrap(done);
    if (executor.broken !== undefined) throw executor.broken;
    if (executor.knowsUpdate(updateId)) {
      if (entry.finished !== undefined) throw endedFirst(entry, name, updateId);
      return stage === "accepted" ? undefined : unwrap(await this.outcomeOf(id, updateId));
    }
    if (entry.finished !== undefined)
      throw new RejectedError(`run ${entry.runId} of ${id} has finished (${entry.finished}); update '${name}' was not applied`, {
        reason: "already-finished",
      });
    executor.validateUpdate(name, arg);
    executor.claimUpdate(updateId);
    const outcome = this.outcomeOf(id, updateId);
    try {
      await this.deps.records.append(entry, {
        kind: "update",
        id: updateId,
        name,
        arg,
        at: this.deps.clock.now(),
        ...traceField(this.deps.telemetry),
      });
    } catch (e) {
      // The update was not journaled; the storage failure that stopped it also rejects `outcome`.
      outcome.catch(() => undefined);
      throw e;
    }
    if (stage === "accepted") {
      // The caller asks for the outcome later, by the update's ID; nobody waits on this promise.
      outcome.catch(() => undefined);
      return undefined;
    }
    return unwrap(await outcome);
  }
}

/** The refusal of an update whose run ended before its handler returned. */
function endedFirst(entry: RunEntry, name: string | undefined, updateId: string): RejectedError {
  const update = name === undefined ? `update ${updateId}` : `update '${name}' (ID ${updateId})`;
  return new RejectedError(
    `run ${entry.runId} of ${entry.id} finished (${entry.finished ?? "ending"}) before the handler of ${update} returned; no outcome was journaled`,
    { reason: "already-finished" },
  );
}

function key(id: string, updateId: string): string {
  return `${id}\0${updateId}`;
}

/** The value of an outcome, or its error thrown. */
function unwrap(o: { ok: boolean; value?: unknown; error?: unknown }): unknown {
  if (o.ok) return o.value;
  throw o.error;
}
