import "reflect-metadata";
import type { Engine } from "@fusee/runtime";
import type { FlowContext } from "./flow-context.js";
import { FlowDedup } from "./flow-dedup.js";
import { FlowEngines } from "./flow-engine.js";
import { FlowEvents } from "./flow-events.js";
import { FlowFinal } from "./flow-final.js";
import { FTICK, flowActionText, type FlowAction, type FlowPlan } from "./flow-plan.js";
import { FlowViolation, type FlowProperty } from "./flow-properties.js";
import { FlowRetention } from "./flow-retention.js";
import { FlowSchedules } from "./flow-schedules.js";
import { FlowStarts } from "./flow-starts.js";
import type { Running } from "./schedule-model.js";

export interface FlowRunOptions {
  /** Check only this property: violations of the others are noted in the trace and the plan goes on. */
  readonly only?: FlowProperty;
  /** Go on after a violation, collecting the first of each property. */
  readonly collect?: boolean;
}

export interface FlowReport {
  readonly trace: string[];
  readonly violations: FlowViolation[];
  readonly actions: number;
}

/** After the last action: fault-free time for every window to fire, every hold and every limited step to end. */
const SETTLE_MS = 30_000;
const SETTLE_TURNS = 100;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs one plan against real engines on a simulated disk, checking the flow properties as it goes and at the end. */
export async function runFlowPlan(plan: FlowPlan, options: FlowRunOptions = {}): Promise<FlowReport> {
  const sim = new FlowSimulation(plan, options);
  const escaped: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void escaped.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    try {
      await sim.run();
    } catch (e) {
      if (!(e instanceof FlowViolation)) throw e;
      sim.violate(e.property, e.message.replace(/^\w+: /, ""));
    }
    await sim.engines.close().catch((e: unknown) => {
      if (!(e instanceof FlowViolation)) throw e;
      sim.violate(e.property, e.message.replace(/^\w+: /, ""));
    });
    for (let i = 0; i < SETTLE_TURNS; i++) await turn();
    for (const reason of escaped)
      sim.violate(
        "unhandled",
        `an unhandled rejection reached the process: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`,
      );
  } finally {
    process.off("unhandledRejection", onUnhandled);
    await sim.engines.close();
  }
  return { trace: sim.trace, violations: sim.violations, actions: plan.actions.length };
}

/** Drives one plan's actions and faults; its parts (schedules, hand-started runs, windows) keep their models. */
class FlowSimulation implements FlowContext {
  readonly trace: string[] = [];
  readonly violations: FlowViolation[] = [];
  readonly engines: FlowEngines;
  private readonly schedules: FlowSchedules;
  private readonly starts: FlowStarts;
  private readonly events: FlowEvents;
  private readonly retention: FlowRetention;
  private readonly dedup: FlowDedup;
  private step = -1;

  constructor(
    readonly plan: FlowPlan,
    private readonly options: FlowRunOptions,
  ) {
    this.engines = new FlowEngines(plan, plan.start, this.trace);
    this.schedules = new FlowSchedules(this);
    this.starts = new FlowStarts(this);
    this.events = new FlowEvents(this);
    this.retention = new FlowRetention(this);
    this.dedup = new FlowDedup(this);
  }

  async run(): Promise<void> {
    await this.engines.open();
    await this.schedules.create();
    await this.dedup.create();
    for (this.step = 0; this.step < this.plan.actions.length; this.step++) {
      const action = this.plan.actions[this.step] as FlowAction;
      this.trace.push(`#${this.step} ${flowActionText(action)} (at ${this.engines.now})`);
      await this.perform(action);
      if (this.engines.struck) await this.faulted();
      await this.observe();
    }
    this.step = this.plan.actions.length;
    this.trace.push(`settle ${SETTLE_MS}ms`);
    this.engines.disk.disarm();
    if (this.engines.crashArmed) {
      this.engines.powerLoss();
      await this.faulted();
    }
    await this.advance(SETTLE_MS);
    await this.observe();
    const w = this.engines.world;
    const runs = await (this.engines.engine as Engine).list(100_000);
    this.trace.push(
      `  seen: ${runs.filter((r) => r.id.startsWith("s")).length} schedule runs, ${w.bodies.length} limited bodies, ${w.attempts.length} heartbeating attempts (${w.attempts.filter((a) => a.from > 0).length} resumed), ${w.tokens.size} tokens, ${this.events.sent.length} events, ${this.engines.faults} faults, dedup ${JSON.stringify(this.dedup.seen)}`,
    );
    const final = new FlowFinal(this.engines, this.plan, (p, d) => this.violate(p, d));
    const s = this.starts;
    await final.check(this.schedules.schedules, this.events.sent, s.limited, s.answers, s.awaiting);
    await final.beats(s.beats);
    this.trace.push(`  versioned runs ended: ${JSON.stringify(await final.versions(s.versioned))}`);
    await this.dedup.final();
  }

  violate(property: FlowProperty, detail: string): void {
    const v = new FlowViolation(property, `at action ${this.step}: ${detail}`);
    this.trace.push(`  VIOLATION ${v.message}`);
    v.trace = this.trace;
    if (this.options.only !== undefined && this.options.only !== property) return;
    if (this.options.collect === true) {
      if (!this.violations.some((x) => x.property === property)) this.violations.push(v);
      return;
    }
    throw v;
  }

  // ---- actions ----

  private async perform(x: FlowAction): Promise<void> {
    const engines = this.engines;
    switch (x.a) {
      case "advance":
        return this.advance(x.ms);
      case "crash":
        engines.armCrash(x.afterOps);
        return;
      case "failSync":
        engines.disk.failNextSegmentSync = true;
        return;
      case "restart":
      case "down": {
        const active = await this.schedules.activeAll();
        if (x.a === "restart") await engines.restart(0);
        else await engines.down(x.ms);
        return this.reopened(active, true);
      }
      case "pause":
      case "resume":
      case "trigger":
      case "backfill":
      case "delete":
      case "update":
        return this.schedules.op(x);
      case "crashTrigger":
        engines.armCrash(x.afterOps);
        return this.schedules.op({ a: "trigger", s: x.s });
      case "limited":
        return this.starts.startLimited(x.n, x.steps);
      case "cancel":
        return this.starts.cancelLimited(x.n);
      case "batch":
      case "debounce":
        return this.events.event(x.a, x.key, x.ev);
      case "await":
        return this.starts.startAwait(x.n);
      case "complete":
      case "fail":
        return this.starts.answer(x.a, x.n, x.a === "complete" ? x.value : undefined);
      case "beat":
        return this.starts.startBeat(x.n, x.plan);
      case "versioned":
        return this.starts.startVersioned(x.n);
      case "retain":
        return this.retention.start(x.n, x.hold);
      case "dedupUpdate":
        return this.dedup.update(x.d, x.u);
      case "dedupNext":
        return this.dedup.next(x.d);
      case "relimit":
        this.engines.relimit(x.concurrent);
        return this.engines.drain();
    }
  }

  /** Moves the clock a tick at a time; each schedule's instants are decided on the runs seen just before. */
  private async advance(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= FTICK) {
      const t = this.engines.now + FTICK;
      const due = this.schedules.schedules.filter((s) => s.instants.has(t));
      const active = due.length > 0 ? await this.schedules.activeAll() : new Map<string, Running[]>();
      await this.engines.tick(FTICK);
      if (this.engines.struck) {
        for (const s of due) {
          s.blur(t);
          this.trace.push(`  ${s.name}@${t}: either (a fault struck in its tick)`);
        }
        await this.faulted();
        continue;
      }
      for (const s of due) {
        s.live(t, active.get(s.name) ?? []);
        this.trace.push(`  ${s.name}@${t}: ${s.expect.get(t) ?? "paused"}`);
      }
      if (due.length > 0) await this.observe();
    }
  }

  /** A fault struck in the middle of work: what was not synced may be lost. */
  private async faulted(): Promise<void> {
    await this.engines.reopen();
    await this.reopened(new Map(), false);
  }

  private async reopened(active: Map<string, Running[]>, clean: boolean): Promise<void> {
    await this.schedules.reopened(active, clean);
    await this.observe();
  }

  /** Safety at a quiet point: the schedules' checks, and what the limit's bodies complained of. */
  private async observe(): Promise<void> {
    if (!this.engines.alive) return;
    await this.schedules.observe();
    await this.retention.observe();
    const complaints = this.engines.world.complaints.splice(0);
    for (const c of complaints) this.violate("limits", c);
  }
}
