import "reflect-metadata";
import { isDeepStrictEqual } from "node:util";
import { container as rootContainer } from "tsyringe";
import type { Engine, JournalRecord, RunDetail } from "@fusee/runtime";
import { Replayer } from "@fusee/runtime/testing";
import { Deliveries } from "./deliveries.js";
import { Generation, type Ledger, type Execution } from "./ledger.js";
import { checkAttributes, checkChildResults, checkClosePolicies, checkListing } from "./lineage-checks.js";
import type { Model, ModelRun } from "./model.js";
import type { Program } from "./program.js";
import type { Property } from "./properties.js";
import { errorClass, Sim, SimLate } from "./sim-workflow.js";

/**
 * The properties checked after every action: what the engine lists, describes and replays, and
 * what the steps did, against the model's predictions. It remembers what earlier checks saw (steps
 * durable, runs finished) so that a run going back or a step running again is caught.
 */
export class Checks {
  /** Step records seen in journals, by workflow ID, run and step name: the ledger length when first seen. */
  private readonly durableSteps = new Map<string, number>();
  /** Finished runs seen: their run ID and status. */
  private readonly finished = new Map<string, { runId: number; status: string }>();
  private readonly maxRunId = new Map<string, number>();
  /** Step keys and the step (workflow ID, run, name) each belongs to. */
  private readonly keyOwners = new Map<string, string>();
  private readonly replayer: Replayer;
  /** Each ID's run as the last check saw it. */
  private readonly lastRunIds = new Map<string, number>();
  readonly deliveries: Deliveries;

  constructor(
    private readonly model: Model,
    private readonly ledger: Ledger,
    /** IDs whose start was acknowledged. */
    private readonly started: ReadonlySet<string>,
    private readonly violate: (property: Property, detail: string) => void,
  ) {
    const replayContainer = rootContainer.createChildContainer();
    // What replayed code reads of its context goes to the schedule's ledger, to compare with the engine's runs.
    const dead = new Generation(0, ledger);
    dead.alive = false;
    replayContainer.registerInstance(Generation, dead);
    this.replayer = new Replayer({ container: replayContainer }).register(Sim, SimLate);
    this.deliveries = new Deliveries(violate);
  }

  /** The run of `id` the last check saw, if any. */
  lastRunId(id: string): number | undefined {
    return this.lastRunIds.get(id);
  }

  /**
   * Checks what the engine shows after an action against the model and the ledger; returns the
   * runs' statuses for the trace. `mustAbort`: hanging attempts the action's cancel or terminate
   * should have aborted.
   */
  async after(engine: Engine, gen: Generation, mustAbort: readonly Execution[]): Promise<string> {
    this.ledger.settle(gen.n);
    this.ledger.confirm(gen.n);
    const listed = await engine.list(100_000);
    const ids = new Set(listed.map((r) => r.id));
    this.checkRunSet(ids);
    const statuses: string[] = [];
    const details = new Map<string, RunDetail>();
    for (const id of [...ids].sort()) {
      const detail = await engine.describe(id);
      if (detail === undefined) {
        this.violate("runSet", `${id} is listed but describe finds no run`);
        continue;
      }
      details.set(id, detail);
      statuses.push(`${id}#${detail.runId}:${detail.status}`);
      await this.checkRun(detail);
    }
    this.checkLedger(gen, mustAbort);
    for (const c of this.ledger.complaints.splice(0)) this.violate("replays", c);
    this.deliveries.check(details);
    checkListing(listed, details, this.violate);
    checkClosePolicies(details, this.violate);
    checkChildResults(details, this.violate);
    await checkAttributes(engine, details, this.model, this.violate);
    for (const [id, d] of details) this.lastRunIds.set(id, d.runId);
    return statuses.join(" ");
  }

  private checkRunSet(ids: ReadonlySet<string>): void {
    for (const id of this.started) {
      const m = this.model.runs.get(id);
      if (!ids.has(id) && m?.exists === true) this.violate("runSet", `${id} was started (acknowledged) but the engine has no run of it`);
    }
    for (const [id, m] of this.model.runs) {
      const origin = m.origin === undefined ? undefined : this.model.runs.get(m.origin);
      const unsure = origin !== undefined && !origin.determined && !this.lastRunIds.has(id);
      if (m.exists === true && m.determined && !unsure && !ids.has(id) && !this.started.has(id))
        this.violate("runSet", `${id} should exist (its parent started it) but the engine has no run of it`);
    }
    for (const id of ids) {
      if (!this.model.runs.has(id) && !this.model.mayExistUnseen(id))
        this.violate("runSet", `${id} appeared: nothing the engine acknowledged started it`);
    }
    for (const [id, f] of this.finished) {
      if (!ids.has(id)) this.violate("runSet", `${id} finished (${f.status}, run ${f.runId}) and then vanished`);
    }
  }

  private async checkRun(detail: RunDetail): Promise<void> {
    const { id, runId, status, journal } = detail;
    const finishedStatuses = ["ok", "failed", "cancelled", "terminated"];
    const isFinished = finishedStatuses.includes(status);

    // Runs never go back, and finished runs stay finished.
    const max = this.maxRunId.get(id) ?? 0;
    if (runId < max) this.violate("runSet", `${id} went back from run ${max} to run ${runId}`);
    this.maxRunId.set(id, Math.max(max, runId));
    const seen = this.finished.get(id);
    if (seen !== undefined && seen.runId === runId && seen.status !== status) {
      this.violate("runSet", `run ${runId} of ${id} had finished ${seen.status} and is now ${status}`);
    }
    if (isFinished && (seen === undefined || seen.runId < runId)) this.finished.set(id, { runId, status });

    // Every journal replays with the same classes.
    const replay = await this.replayer.replay(detail);
    if (!replay.ok)
      this.violate("replays", `run ${runId} of ${id} (${journal.length} records: ${kinds(journal)}) does not replay: ${replay.error}`);

    // The status and the journal agree.
    const finishAt = journal.findIndex((r) => r.kind === "finish");
    const last = journal[journal.length - 1];
    if (finishAt >= 0 && finishAt !== journal.length - 1) {
      this.violate("statusJournal", `run ${runId} of ${id} has records after its finish: ${kinds(journal)}`);
    }
    if (isFinished !== (last?.kind === "finish")) {
      this.violate(
        "statusJournal",
        `run ${runId} of ${id} is ${status} but its journal ends with ${last?.kind ?? "nothing"}: ${kinds(journal)}`,
      );
    }
    if (last?.kind === "finish" && last.status !== status) {
      this.violate("statusJournal", `run ${runId} of ${id} is ${status} but its finish record says ${last.status}`);
    }
    const start = journal[0];
    const prog = start?.kind === "start" ? (start.input as Program) : undefined;
    const cancelAt = journal.findIndex((r) => r.kind === "cancel");
    // A finish right after the cancel is the code's own end, come before the cancel reached it (a
    // settled run's code is at a wait, which a cancel interrupts, or done); any record between them
    // means the code went on after it.
    if (
      prog !== undefined &&
      !prog.catchCancel &&
      cancelAt >= 0 &&
      finishAt > cancelAt + 1 &&
      last?.kind === "finish" &&
      last.status === "ok"
    ) {
      this.violate(
        "statusJournal",
        `run ${runId} of ${id} ends ok though its journal holds a cancellation its code does not catch: ${kinds(journal)}`,
      );
    }

    // Step results that are durable now.
    for (const r of journal) {
      if (r.kind !== "step") continue;
      const k = `${id}#${runId}#${r.name}`;
      if (!this.durableSteps.has(k)) this.durableSteps.set(k, this.ledger.executions.length);
    }

    // What the model predicts.
    const m = this.model.runs.get(id);
    if (m === undefined || !m.determined || m.exists !== true) return;
    this.compareRun(detail, m, isFinished, last);
    // Past a mismatch the model no longer knows the run: following it further would only repeat the finding.
    this.diverged(id, detail);
  }

  private diverged(id: string, detail: RunDetail): void {
    const m = this.model.runs.get(id);
    if (m === undefined || !m.determined) return;
    if (
      m.runId !== detail.runId ||
      m.status !== (["ok", "failed", "cancelled", "terminated"].includes(detail.status) ? detail.status : "running")
    ) {
      this.model.loseRun(id, "the engine and the model disagree about it");
    }
  }

  private compareRun(detail: RunDetail, m: ModelRun, isFinished: boolean, last: JournalRecord | undefined): void {
    const { id, runId, status, journal } = detail;
    if (m.runId !== undefined && m.runId !== runId) {
      return this.violate("results", `${id} is at run ${runId}; the model expected run ${m.runId}`);
    }
    if (m.status === "running") {
      if (isFinished)
        this.violate(
          "results",
          `run ${runId} of ${id} ended ${status}${describeFinish(last)}; the model expected it to be still running (${kinds(journal)})`,
        );
      return;
    }
    if (!isFinished)
      return this.violate(
        "results",
        `run ${runId} of ${id} is ${status}; the model expected it to have ended ${m.status} (${kinds(journal)})`,
      );
    if (status !== m.status)
      return this.violate("results", `run ${runId} of ${id} ended ${status}${describeFinish(last)}; the model expected ${m.status}`);
    if (last?.kind !== "finish") return;
    if (m.status === "ok" && !isDeepStrictEqual(normalize(last.value), m.value)) {
      return this.violate(
        "results",
        `run ${runId} of ${id} returned ${JSON.stringify(last.value)}; the model expected ${JSON.stringify(m.value)}`,
      );
    }
    if (m.status !== "ok" && errorClass(last.error) !== m.errorClass) {
      return this.violate(
        "results",
        `run ${runId} of ${id} ended ${status} with ${errorClass(last.error)}; the model expected ${m.errorClass}`,
      );
    }
  }

  private checkLedger(gen: Generation, mustAbort: readonly Execution[]): void {
    const failuresByKey = new Map<string, Execution[]>();
    for (const e of this.ledger.executions) {
      const step = `${e.workflowId}#${e.runId}#${e.name}`;
      // Keys identify one step.
      const owner = this.keyOwners.get(e.key);
      if (owner === undefined) this.keyOwners.set(e.key, step);
      else if (owner !== step)
        this.violate(
          "stepKeys",
          `step ${e.name} of run ${e.runId} of ${e.workflowId} ran with key ${e.key}, the key of ${owner.replaceAll("#", " ")}`,
        );
      // No acknowledged step runs again.
      const durableAt = this.durableSteps.get(step);
      if (durableAt !== undefined && e.index >= durableAt) {
        this.violate(
          "noRerun",
          `step ${e.name} of run ${e.runId} of ${e.workflowId} ran again (attempt ${e.attempt}, engine ${e.generation}) after its result was durable`,
        );
      }
      // A step never runs once its policy's attempts have all failed.
      const earlier = failuresByKey.get(e.key) ?? [];
      const settled = earlier.filter((x) => x.settledAt !== undefined && x.settledAt <= e.index).length;
      if (settled >= e.tries) {
        this.violate(
          "retryBudget",
          `step ${e.name} of run ${e.runId} of ${e.workflowId} began an execution (attempt ${e.attempt}, engine ${e.generation}) after ${settled} failed attempts; its policy allows ${e.tries}`,
        );
      }
      earlier.push(e);
      failuresByKey.set(e.key, earlier);
    }
    // Hanging attempts of a cancelled or terminated run are told.
    for (const e of mustAbort) {
      if (e.generation !== gen.n || !e.hangs || e.outcome !== undefined || e.superseded) continue;
      if (!e.aborted)
        this.violate(
          "abortTold",
          `step ${e.name} of run ${e.runId} of ${e.workflowId} was still running and its AbortSignal was not aborted after the run was cancelled or terminated`,
        );
    }
  }
}

/** Values as they read back from the journal: plain JSON. */
export function normalize(v: unknown): unknown {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

function kinds(journal: readonly JournalRecord[]): string {
  return journal
    .map((r) => {
      if (r.kind === "step") return `step ${r.name}${r.ok ? "" : " failed"}`;
      if (r.kind === "finish") return `finish ${r.status}`;
      if (r.kind === "signal") return `signal ${r.name}`;
      return r.kind;
    })
    .join(", ");
}

function describeFinish(last: JournalRecord | undefined): string {
  if (last?.kind !== "finish") return "";
  return last.status === "ok" ? ` with ${JSON.stringify(last.value)}` : ` with ${errorClass(last.error)}`;
}
