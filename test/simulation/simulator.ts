import "reflect-metadata";
import { isDeepStrictEqual } from "node:util";
import { container as rootContainer } from "tsyringe";
import { Config, Engine, FuseeError, StorageError, type JournalRecord, type RunDetail } from "@fusee/runtime";
import { Replayer, VirtualClock } from "@fusee/runtime/testing";
import { Generation, Ledger, type Execution } from "./ledger.js";
import { Model, type Expectation, type ModelRun } from "./model.js";
import { actionText, TICK, type Action, type Program, type Schedule } from "./program.js";
import { Random, SimDisk } from "./sim-disk.js";
import { errorClass, Sim, type AddArg } from "./sim-workflow.js";

/** The properties checked after every action of a schedule. */
export const PROPERTIES = {
  noRerun: "no acknowledged step re-runs",
  replays: "every journal replays",
  statusJournal: "status agrees with the journal",
  results: "results and call outcomes equal the model's",
  runSet: "no run appears or vanishes, and finished runs stay finished",
  retryBudget: "retry budgets hold across restarts",
  abortTold: "an aborted attempt is told",
  stepKeys: "a step's key belongs to its own step",
  recovery: "the engine opens every crash image and stays live",
  unhandled: "no rejection escapes the engine unhandled",
} as const;

export type Property = keyof typeof PROPERTIES;

/** A property that did not hold, with where and why. */
export class Violation extends Error {
  /** What the schedule did up to the violation. */
  trace: readonly string[] = [];

  constructor(
    readonly property: Property,
    readonly detail: string,
  ) {
    super(`${PROPERTIES[property]}: ${detail}`);
    this.name = "Violation";
  }
}

export interface RunOptions {
  /** Check only this property: violations of the others are noted and the schedule goes on. */
  readonly only?: Property;
  /** Go on after a violation, collecting them all (the first of each property). */
  readonly collect?: boolean;
}

/** What a schedule did: a trace (to check determinism) and the violations found when collecting. */
export interface RunReport {
  readonly trace: string[];
  readonly violations: Violation[];
  readonly actions: number;
}

const DIR = "/data";
const START_TIME = Date.UTC(2030, 0, 1);
const QUIET_ROUNDS = 3;
const MAX_ROUNDS = 2000;
const SETTLE_AFTER_TURNS = 100;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Call {
  readonly action: Action;
  readonly gen: Generation;
  settled: boolean;
  /** Settled while its engine was still the live one. */
  settledAlive: boolean;
  ok: boolean;
  value: unknown;
  error: unknown;
}

/** Runs one schedule against a real engine on a simulated disk, checking every property after each action. */
export async function runSchedule(schedule: Schedule, options: RunOptions = {}): Promise<RunReport> {
  const sim = new Simulation(schedule, options);
  const escaped: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void escaped.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    await sim.run();
    await sim.close();
    // Abandoned engines go on until their work runs out; whatever they reject unhandled shows up by then.
    for (let i = 0; i < SETTLE_AFTER_TURNS; i++) await turn();
    for (const reason of escaped) sim.escaped(reason);
  } finally {
    process.off("unhandledRejection", onUnhandled);
    await sim.close();
  }
  return { trace: sim.trace, violations: sim.violations, actions: schedule.actions.length };
}

class Simulation {
  readonly trace: string[] = [];
  readonly violations: Violation[] = [];
  private readonly ledger = new Ledger();
  private readonly model = new Model(START_TIME);
  private readonly rng: Random;
  private readonly replayer: Replayer;
  private disk: SimDisk;
  private clock: VirtualClock;
  private engine: Engine | undefined;
  private gen: Generation | undefined;
  private generations = 0;
  private now = START_TIME;
  /** Set when the armed power loss happened: the image it left. */
  private crashImage: SimDisk | undefined;
  /** A power loss is armed and has not happened yet. */
  private crashArmed = false;
  private step = -1;
  /** Step records seen in journals, by workflow ID, run and step name: the ledger length when first seen. */
  private readonly durableSteps = new Map<string, number>();
  /** Finished runs seen: their run ID and status. */
  private readonly finished = new Map<string, { runId: number; status: string }>();
  private readonly maxRunId = new Map<string, number>();
  /** IDs whose start was acknowledged. */
  private readonly started = new Set<string>();
  /** Step keys and the step (workflow ID, run, name) each belongs to. */
  private readonly keyOwners = new Map<string, string>();
  /** Executions of hanging steps that a cancel or terminate must abort. */
  private mustAbort: Execution[] = [];

  constructor(
    private readonly schedule: Schedule,
    private readonly options: RunOptions,
  ) {
    this.rng = new Random(schedule.diskSeed);
    this.disk = SimDisk.empty(DIR);
    this.clock = new VirtualClock(START_TIME, { runningStepGrace: 0 });
    const replayContainer = rootContainer.createChildContainer();
    const dead = new Generation(0, new Ledger());
    dead.alive = false;
    replayContainer.registerInstance(Generation, dead);
    this.replayer = new Replayer({ container: replayContainer }).register(Sim);
  }

  async run(): Promise<void> {
    await this.open();
    await this.drain();
    for (this.step = 0; this.step < this.schedule.actions.length; this.step++) {
      const action = this.schedule.actions[this.step] as Action;
      this.trace.push(`#${this.step} ${actionText(action)}`);
      await this.perform(action);
      await this.afterFaults();
      await this.check();
    }
    if (this.crashArmed) {
      this.powerLoss();
      await this.afterFaults();
      await this.check();
    }
  }

  async close(): Promise<void> {
    this.disk.disarm();
    const engine = this.engine;
    if (engine === undefined || this.gen === undefined || !this.gen.alive) return;
    this.kill(this.gen);
    await engine.shutdown().catch(() => undefined);
  }

  /** A rejection no one handled reached the process. */
  escaped(reason: unknown): void {
    this.violate(
      "unhandled",
      `an unhandled rejection reached the process: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`,
    );
  }

  // ---- actions ----

  private async perform(action: Action): Promise<void> {
    switch (action.a) {
      case "advance":
        return this.advance(this.now + action.ms);
      case "crash":
        if (action.afterOps === 0) return this.powerLoss();
        this.crashArmed = true;
        this.disk.onOp(this.disk.ops + action.afterOps, () => this.powerLoss());
        return;
      case "failSync":
        this.disk.failNextSegmentSync = true;
        return;
      case "restart":
        return this.restart();
      default:
        return this.call(action);
    }
  }

  private async call(action: Exclude<Action, { a: "advance" | "crash" | "failSync" | "restart" }>): Promise<void> {
    const engine = this.engine as Engine;
    const gen = this.gen as Generation;
    const before = action.a === "cancel" || action.a === "terminate" ? this.runningHangs(action.id) : [];
    const c: Call = { action, gen, settled: false, settledAlive: false, ok: false, value: undefined, error: undefined };
    let promise: Promise<unknown>;
    try {
      switch (action.a) {
        case "start":
          promise = engine.start(Sim, action.id, action.prog, action.policy === undefined ? {} : { idPolicy: action.policy });
          break;
        case "signal":
          promise = engine.run(action.id).signal(action.name, action.value);
          break;
        case "update": {
          const arg: AddArg = { n: action.n, step: action.step };
          promise = engine.run(action.id).update("add", arg, action.uid === undefined ? {} : { id: action.uid });
          break;
        }
        case "query":
          promise = engine.run(action.id).query("state");
          break;
        case "cancel":
          promise = engine.run(action.id).cancel("the simulation cancels it");
          break;
        case "terminate":
          promise = engine.run(action.id).terminate("the simulation terminates it");
          break;
      }
    } catch (e) {
      promise = Promise.reject(e);
    }
    promise.then(
      (value) => {
        c.settled = true;
        c.settledAlive = gen.alive;
        c.ok = true;
        // A start answers with a handle on the run; its ID is what there is to compare.
        c.value = action.a === "start" ? (value as { id: string }).id : value;
      },
      (error: unknown) => {
        c.settled = true;
        c.settledAlive = gen.alive;
        c.error = error;
      },
    );
    await this.drain();
    if (!c.settled || !c.settledAlive || (c.error instanceof StorageError && this.syncFailed())) {
      if (!gen.alive || this.syncFailed()) {
        if (action.a !== "query") this.model.doubt(action.id, actionText(action));
        this.trace.push(`  in doubt`);
        return;
      }
      return this.violate("recovery", `${actionText(action)} never settled on a live engine`);
    }
    this.trace.push(`  ${c.ok ? `ok ${JSON.stringify(c.value ?? null)}` : `${errorClass(c.error)}: ${(c.error as Error)?.message}`}`);
    await this.compareCall(action, c);
    if (c.ok && before.length > 0) this.mustAbort.push(...before);
  }

  private async compareCall(action: Exclude<Action, { a: "advance" | "crash" | "failSync" | "restart" }>, c: Call): Promise<void> {
    let expected: Expectation;
    switch (action.a) {
      case "start":
        expected = this.model.start(action.id, action.prog, action.policy);
        if (c.ok) {
          this.started.add(action.id);
          if (expected.outcome === "any") {
            // The run this start began may have continued as new already (a program continues at most once).
            const detail = await (this.engine as Engine).describe(action.id);
            const first = detail?.journal[0];
            if (detail !== undefined && first?.kind === "start") {
              const runId = first.from?.reason === "continue-as-new" ? first.from.runId : detail.runId;
              this.model.startedAnyway(action.id, action.prog, action.policy, runId);
            }
          }
        }
        break;
      case "signal":
        expected = this.model.signal(action.id, action.name, action.value);
        break;
      case "update":
        expected = this.model.update(action.id, { n: action.n, step: action.step }, action.uid);
        break;
      case "query":
        expected = this.model.query(action.id);
        break;
      case "cancel":
        expected = this.model.cancel(action.id);
        break;
      case "terminate":
        expected = this.model.terminate(action.id);
        break;
    }
    const what = actionText(action);
    if (!c.ok && c.error instanceof StorageError)
      return this.violate("recovery", `${what} failed with ${String(c.error)} though no fault was placed`);
    if (!c.ok && !(c.error instanceof FuseeError))
      return this.violate("results", `${what} threw ${String(c.error)}, which is not a FuseeError`);
    if (expected.outcome === "any") return;
    if (expected.outcome === "ok") {
      if (!c.ok)
        return this.violate(
          "results",
          `${what} was refused with ${errorClass(c.error)} (${(c.error as Error).message}); the model expected it to succeed`,
        );
      if ("value" in expected && !isDeepStrictEqual(normalize(c.value), expected.value)) {
        return this.violate("results", `${what} returned ${JSON.stringify(c.value)}; the model expected ${JSON.stringify(expected.value)}`);
      }
      return;
    }
    if (c.ok) return this.violate("results", `${what} succeeded; the model expected ${expected.errorClass}`);
    if (errorClass(c.error) !== expected.errorClass) {
      return this.violate(
        "results",
        `${what} failed with ${errorClass(c.error)} (${(c.error as Error).message}); the model expected ${expected.errorClass}`,
      );
    }
  }

  private async advance(target: number): Promise<void> {
    while (this.now < target) {
      const t = this.now + TICK;
      // A fault in this tick may undo what it did: steps that were between attempts begin again.
      const stepping = this.model.stepping();
      this.model.tick(t);
      this.now = t;
      await this.clock.advance(TICK);
      await this.drain();
      await this.afterFaults(stepping);
    }
  }

  private async restart(): Promise<void> {
    const engine = this.engine as Engine;
    const gen = this.gen as Generation;
    this.ledger.settle(gen.n);
    this.kill(gen);
    await engine.shutdown().catch(() => undefined);
    this.model.interrupted();
    await this.open();
    await this.drain();
  }

  // ---- faults ----

  /** A power loss now: the image of the disk is taken and the engine abandoned, uncounted from here on. */
  private powerLoss(): void {
    if (this.crashImage !== undefined || this.gen === undefined) return;
    this.crashArmed = false;
    this.crashImage = this.disk.crashImage(this.rng);
    this.kill(this.gen);
  }

  private syncFailed(): boolean {
    return this.disk.syncFailed;
  }

  private kill(gen: Generation): void {
    if (!gen.alive) return;
    gen.alive = false;
    this.ledger.died(gen.n);
  }

  /** After a power loss or a failed sync: checks the old engine's refusal, reopens on what the disk holds. */
  private async afterFaults(stepping: readonly string[] = []): Promise<void> {
    if (this.disk.syncFailed && this.crashImage === undefined) {
      const probe = await (this.engine as Engine).start(Sim, "probe", { body: [], catchCancel: false }).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!(probe instanceof StorageError)) {
        this.violate(
          "recovery",
          `after a failed sync the engine ${probe === undefined ? "accepted a start" : `refused a start with ${String(probe)}`}; it must refuse with StorageError`,
        );
      }
      this.crashImage = this.disk.crashImage(this.rng);
      this.kill(this.gen as Generation);
      this.trace.push(`  sync failed`);
    }
    if (this.crashImage === undefined) return;
    this.trace.push(`  power loss at file operation ${this.disk.ops}`);
    this.loseFlakyRuns();
    for (const id of stepping) this.model.loseRun(id, "a restart in the tick its step ended began the step again");
    this.model.interrupted();
    this.disk.disarm();
    this.disk = this.crashImage;
    this.crashImage = undefined;
    await this.open();
    await this.drain();
  }

  /**
   * A flaky step whose execution a power loss may have un-journaled runs again and may succeed
   * sooner (its service saw one more call): runs that ran one since the last quiet point leave the model.
   */
  private loseFlakyRuns(): void {
    for (const e of this.ledger.executions) {
      if (e.generation !== (this.gen as Generation).n || e.settledAt !== undefined || e.outcome !== "failed") continue;
      this.model.loseRun(e.workflowId, `a power loss may have lost the failure of its step ${e.name}`);
    }
  }

  private async open(): Promise<void> {
    const gen = new Generation(++this.generations, this.ledger);
    const container = rootContainer.createChildContainer();
    container.registerInstance(Generation, gen);
    this.clock = new VirtualClock(this.now, { runningStepGrace: 0 });
    this.gen = gen;
    this.engine = undefined;
    const config = Config.local(DIR)
      .shards(this.schedule.shards)
      .cache(this.schedule.cache)
      .segmentBytes(this.schedule.segmentBytes)
      .clock(this.clock);
    try {
      this.engine = await Engine.open(config, { workflows: [Sim], container, fileLayer: this.disk.layer });
    } catch (e) {
      this.kill(gen);
      throw new Violation(
        "recovery",
        `the engine refused to open after ${this.step < 0 ? "creation" : `action ${this.step}`}: ${String(e)}`,
      );
    }
    gen.engine = this.engine;
    this.trace.push(`  engine ${gen.n} open`);
    // Timers that fell due while the engine was down fire at once.
    await this.clock.advance(0);
  }

  // ---- quiescence ----

  /** Lets the engine run until nothing moves: no file operation, no step, no record being applied. */
  private async drain(): Promise<void> {
    let quiet = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const before = this.fingerprint();
      // Hanging steps run until aborted: the engine is idle when only they are left.
      if (this.engine !== undefined && this.gen?.alive === true) await this.engine.idle({ runningSteps: "ignore" });
      for (let i = 0; i < 4; i++) await turn();
      if (before === this.fingerprint()) {
        if (++quiet < QUIET_ROUNDS) continue;
        // A quiet engine has journaled every failure so far.
        if (this.gen?.alive === true && !this.disk.syncFailed) this.ledger.settle(this.gen.n);
        return;
      }
      quiet = 0;
    }
    this.violate("recovery", `the engine never became quiet (${MAX_ROUNDS} rounds)`);
  }

  private fingerprint(): string {
    return `${this.disk.ops}/${this.ledger.executions.length}/${this.clock.pendingTimers}`;
  }

  // ---- checks ----

  private async check(): Promise<void> {
    const engine = this.engine as Engine;
    const gen = this.gen as Generation;
    if (!gen.alive) return;
    this.ledger.settle(gen.n);
    const listed = await engine.list(100_000);
    const ids = new Set(listed.map((r) => r.id));
    this.checkRunSet(ids);
    const statuses: string[] = [];
    for (const id of [...ids].sort()) {
      const detail = await engine.describe(id);
      if (detail === undefined) {
        this.violate("runSet", `${id} is listed but describe finds no run`);
        continue;
      }
      statuses.push(`${id}#${detail.runId}:${detail.status}`);
      await this.checkRun(detail);
    }
    this.trace.push(`  ${statuses.join(" ")}`);
    this.checkLedger();
  }

  private checkRunSet(ids: ReadonlySet<string>): void {
    for (const id of this.started) {
      const m = this.model.runs.get(id);
      if (!ids.has(id) && m?.exists === true) this.violate("runSet", `${id} was started (acknowledged) but the engine has no run of it`);
    }
    for (const [id, m] of this.model.runs) {
      if (m.exists === true && m.determined && !ids.has(id) && !this.started.has(id))
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

  private checkLedger(): void {
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
    const pending = this.mustAbort;
    this.mustAbort = [];
    for (const e of pending) {
      if (e.generation !== this.gen?.n || !e.hangs || e.outcome !== undefined || e.superseded) continue;
      if (!e.aborted)
        this.violate(
          "abortTold",
          `step ${e.name} of run ${e.runId} of ${e.workflowId} was still running and its AbortSignal was not aborted after the run was cancelled or terminated`,
        );
    }
  }

  /** The hanging executions of `id`'s current run that are running now. */
  private runningHangs(id: string): Execution[] {
    const n = this.gen?.n;
    return this.ledger.executions.filter(
      (e) => e.workflowId === id && e.generation === n && e.outcome === undefined && !e.superseded && !e.interrupted && e.hangs,
    );
  }

  private violate(property: Property, detail: string): void {
    const v = new Violation(property, `at action ${this.step}: ${detail}`);
    this.trace.push(`  VIOLATION ${v.message}`);
    v.trace = this.trace;
    if (this.options.only !== undefined && this.options.only !== property) return;
    if (this.options.collect === true) {
      if (!this.violations.some((x) => x.property === property)) this.violations.push(v);
      return;
    }
    throw v;
  }
}

/** Values as they read back from the journal: plain JSON. */
function normalize(v: unknown): unknown {
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
