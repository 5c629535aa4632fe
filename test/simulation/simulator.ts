import "reflect-metadata";
import { container as rootContainer } from "tsyringe";
import { Config, Engine, FuseeError, StorageError } from "@fusee/runtime";
import { VirtualClock } from "@fusee/runtime/testing";
import { Checks } from "./checks.js";
import { judge, settle, type Call } from "./call-outcomes.js";
import { expect, issue, makeCall, type MadeCall } from "./client-calls.js";
import { checkReader } from "./lineage-checks.js";
import { Generation, Ledger, type Execution } from "./ledger.js";
import { Model, type Expectation } from "./model.js";
import { actionText, START_TIME, TICK, type Action, type ClientCall, type Program, type Schedule } from "./program.js";
import { Violation, type Property } from "./properties.js";
import { Random, SimDisk } from "./sim-disk.js";
import { errorClass, Sim, SimLate } from "./sim-workflow.js";

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
const QUIET_ROUNDS = 3;
const MAX_ROUNDS = 2000;
const SETTLE_AFTER_TURNS = 100;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

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
  private readonly checks: Checks;
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
  /** IDs whose start was acknowledged. */
  private readonly started = new Set<string>();
  /** Executions of hanging steps that a cancel or terminate must abort. */
  private mustAbort: Execution[] = [];
  /** An engine opened on the data since the last check. */
  private reopened = false;
  /** Starts of each ID so far: the epoch of the next. */
  private readonly epochs = new Map<string, number>();

  constructor(
    private readonly schedule: Schedule,
    private readonly options: RunOptions,
  ) {
    this.rng = new Random(schedule.diskSeed);
    this.disk = SimDisk.empty(DIR);
    this.clock = new VirtualClock(START_TIME, { runningStepGrace: 0 });
    this.checks = new Checks(this.model, this.ledger, this.started, (property, detail) => this.violate(property, detail));
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
    if (this.gen?.alive === true && !this.disk.syncFailed)
      await checkReader(this.engine as Engine, this.disk.layer, DIR, (property, detail) => this.violate(property, detail));
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
      case "burst":
        return this.burst(action.calls, action.tick);
      default:
        return this.call(action);
    }
  }

  /**
   * Calls made at once (with the next tick's timers, if `tick`), racing each other and the engine's
   * work: the model cannot tell their order, so it stops following their targets, and only the
   * journal-level properties judge what they did.
   */
  private async burst(calls: readonly ClientCall[], tick: boolean): Promise<void> {
    const engine = this.engine as Engine;
    const gen = this.gen as Generation;
    const made = calls.map((action, sub) => makeCall(action, this.step, sub, this.epochs));
    for (const c of made) this.model.doubtCall(c.action, `${actionText(c.action)} raced other calls`, c.prog);
    const stepping = this.model.stepping();
    let ticked: Promise<void> = Promise.resolve();
    if (tick) {
      this.model.tick(this.now + TICK);
      this.now += TICK;
      ticked = this.clock.advance(TICK);
    }
    const runIds = made.map((c) => this.checks.lastRunId(c.action.id));
    const pending = made.map((c) => settle(c.action, gen, () => issue(engine, c)));
    await ticked;
    await this.drain();
    if (tick) await this.afterFaults(stepping);
    made.forEach((m, i) => {
      const c = pending[i] as Call;
      if (!c.settled || !c.settledAlive) return void this.trace.push(`  ${actionText(m.action)}: in doubt`);
      this.trace.push(`  ${actionText(m.action)}: ${c.ok ? `ok ${JSON.stringify(c.value ?? null)}` : errorClass(c.error)}`);
      if (!c.ok && !(c.error instanceof FuseeError))
        this.violate("results", `${actionText(m.action)} threw ${String(c.error)}, which is not a FuseeError`);
      if (c.ok) this.acknowledged(m, runIds[i]);
    });
  }

  /** An acknowledged call: what it delivered must be found where it went, and what it started exists. */
  private acknowledged(m: MadeCall, runId: number | undefined): void {
    const x = m.action;
    const what = actionText(x);
    if (x.a === "start" || x.a === "sws" || x.a === "uws") {
      this.started.add(x.id);
      this.model.exists(x.id);
    }
    if ((x.a === "signal" && x.name !== "set") || x.a === "sws")
      this.checks.deliveries.acked(x.id, "signal", m.value as number, runId, what);
    if (x.a === "update" || (x.a === "uws" && x.n >= 0)) this.checks.deliveries.acked(x.id, "update", m.uid as string, runId, what);
  }

  private async call(action: ClientCall): Promise<void> {
    const engine = this.engine as Engine;
    const gen = this.gen as Generation;
    const before = action.a === "cancel" || action.a === "terminate" ? this.runningHangs(action.id) : [];
    const made = makeCall(action, this.step, 0, this.epochs);
    const runId = this.checks.lastRunId(action.id);
    const c = settle(action, gen, () => issue(engine, made));
    await this.drain();
    if (!c.settled || !c.settledAlive || (c.error instanceof StorageError && this.syncFailed())) {
      if (!gen.alive || this.syncFailed()) {
        this.model.doubtCall(action, actionText(action), made.prog);
        this.trace.push(`  in doubt`);
        return;
      }
      return this.violate("recovery", `${actionText(action)} never settled on a live engine`);
    }
    this.trace.push(`  ${c.ok ? `ok ${JSON.stringify(c.value ?? null)}` : `${errorClass(c.error)}: ${(c.error as Error)?.message}`}`);
    await this.compareCall(made, c);
    if (c.ok) this.acknowledged(made, runId);
    if (c.ok && before.length > 0) this.mustAbort.push(...before);
  }

  private async compareCall(made: MadeCall, c: Call): Promise<void> {
    const action = made.action;
    const expected: Expectation = expect(this.model, made);
    if (action.a === "start" && c.ok && expected.outcome === "any") {
      // The run this start began may have continued as new already (a program continues at most once).
      const detail = await (this.engine as Engine).describe(action.id);
      const first = detail?.journal[0];
      if (detail !== undefined && first?.kind === "start") {
        const runId = first.from?.reason === "continue-as-new" ? first.from.runId : detail.runId;
        this.model.startedAnyway(
          action.id,
          made.prog as Program,
          action.policy,
          action.tag,
          runId,
          action.late === true ? "SimLate" : "Sim",
        );
      }
    }
    judge(actionText(action), expected, c, (property, detail) => this.violate(property, detail));
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
      // Runs of a type the engine learns only now wait for it, recovered ones too.
      this.engine.register(SimLate);
    } catch (e) {
      this.kill(gen);
      throw new Violation(
        "recovery",
        `the engine refused to open after ${this.step < 0 ? "creation" : `action ${this.step}`}: ${String(e)}`,
      );
    }
    gen.opened(this.engine);
    this.reopened = this.generations > 1;
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
    const gen = this.gen as Generation;
    if (!gen.alive) return;
    const mustAbort = this.mustAbort;
    this.mustAbort = [];
    for (const note of this.model.notes.splice(0)) this.trace.push(`  the model stops following ${note}`);
    this.trace.push(`  ${await this.checks.after(this.engine as Engine, gen, mustAbort)}`);
    // What the engine recovered, the data-directory reader reads the same way.
    if (this.reopened && !this.disk.syncFailed)
      await checkReader(this.engine as Engine, this.disk.layer, DIR, (p, d) => this.violate(p, d));
    this.reopened = false;
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
