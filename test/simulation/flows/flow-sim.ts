import "reflect-metadata";
import { Batch, Debounce, FuseeError, NotFoundError, RejectedError, type Engine, type RunStatus } from "@fusee/runtime";
import { FlowEngines, type Outcome } from "./flow-engine.js";
import { FlowFinal, type BeatRun, type LimitedRun, type TokenAnswer, type Upgrade, type VersionedRun } from "./flow-final.js";
import { FTICK, flowActionText, type BeatPlan, type FlowAction, type FlowPlan, type LimitedStep } from "./flow-plan.js";
import { FlowViolation, type FlowProperty } from "./flow-properties.js";
import { AWAIT_TIMEOUT, FAwait, FBeat, FCollect, FJob, FLimited } from "./flow-workflows.js";
import { ScheduleModel, type Running } from "./schedule-model.js";
import { WindowModel, type Family, type SentEvent } from "./window-model.js";

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
/** Each ID is started once: a second start is refused whether the first run runs or ended. */
const ONCE = { idPolicy: { running: "fail", finished: "refuse" } } as const;
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

class FlowSimulation {
  readonly trace: string[] = [];
  readonly violations: FlowViolation[] = [];
  readonly engines: FlowEngines;
  private readonly schedules: ScheduleModel[] = [];
  private readonly windows = new Map<string, WindowModel>();
  private readonly sent: SentEvent[] = [];
  private readonly limited = new Map<string, LimitedRun>();
  private readonly answers: TokenAnswer[] = [];
  private readonly beats = new Map<string, BeatRun>();
  private readonly versioned = new Map<string, VersionedRun>();
  /** When the engine of the second version took over from the first. */
  private upgrade: Upgrade | undefined;
  private readonly awaiting = new Map<string, "yes" | "doubt">();
  /** The engine generation that first saw each schedule run, to tell runs an engine began before a fault. */
  private readonly firstSeen = new Map<string, number>();
  private step = -1;

  constructor(
    private readonly plan: FlowPlan,
    private readonly options: FlowRunOptions,
  ) {
    this.engines = new FlowEngines(plan, plan.start, this.trace);
    const debounce = plan.debounce;
    for (const key of ["k0", "k1"] as const) {
      this.windows.set(
        `batch/${key}`,
        new WindowModel("batch", key, { size: plan.batch.size, deadline: (first) => first + plan.batch.timeoutMs }),
      );
      this.windows.set(
        `debounce/${key}`,
        new WindowModel("debounce", key, {
          size: Infinity,
          deadline: (first, last) =>
            Math.min(last + debounce.delayMs, debounce.maxWaitMs === undefined ? Infinity : first + debounce.maxWaitMs),
        }),
      );
    }
  }

  async run(): Promise<void> {
    await this.engines.open();
    for (let i = 0; i < this.plan.schedules.length; i++) {
      const pick = this.plan.schedules[i] as (typeof this.plan.schedules)[number];
      const name = `s${i}`;
      const r = await this.engines.call(`schedule ${name}`, (e) =>
        e.schedule(name, {
          workflow: FJob,
          ...(pick.cron === undefined ? { every: pick.everyMs } : { cron: pick.cron.expr, timezone: pick.cron.zone }),
          overlap: pick.overlap,
          catchUp: pick.catchUp,
          paused: pick.paused,
          input: { hold: pick.holdMs },
        }),
      );
      if (r.doubt || !r.ok) throw new FlowViolation("calls", `creating schedule ${name} failed: ${r.doubt ? "in doubt" : String(r.error)}`);
      this.schedules.push(new ScheduleModel(name, pick, this.engines.now));
    }
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
      `  seen: ${runs.filter((r) => r.id.startsWith("s")).length} schedule runs, ${w.bodies.length} limited bodies, ${w.attempts.length} heartbeating attempts (${w.attempts.filter((a) => a.from > 0).length} resumed), ${w.tokens.size} tokens, ${this.sent.length} events, ${this.engines.faults} faults`,
    );
    const final = new FlowFinal(this.engines, this.plan, (p, d) => this.violate(p, d));
    await final.check(this.schedules, this.sent, this.limited, this.answers, this.awaiting);
    await final.beats(this.beats);
    await final.versions(this.versioned, this.upgrade);
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
        const active = await this.activeAll();
        const stoppedAt = engines.now;
        if (x.a === "restart") await engines.restart(0);
        else await engines.down(x.ms);
        if (engines.gen?.n === this.plan.upgradeAt) this.upgrade = { at: stoppedAt, clean: true };
        return this.reopened(active, true);
      }
      case "pause":
      case "resume":
      case "trigger":
      case "backfill":
      case "delete":
      case "update":
        return this.scheduleOp(x);
      case "crashTrigger":
        engines.armCrash(x.afterOps);
        return this.scheduleOp({ a: "trigger", s: x.s });
      case "limited":
        return this.startLimited(x.n, x.steps);
      case "cancel":
        return this.cancelLimited(x.n);
      case "batch":
      case "debounce":
        return this.event(x.a, x.key, x.ev);
      case "await":
        return this.startAwait(x.n);
      case "complete":
      case "fail":
        return this.answer(x.a, x.n, x.a === "complete" ? x.value : undefined);
      case "beat":
        return this.startBeat(x.n, x.plan);
      case "versioned":
        return this.startVersioned(x.n);
      case "relimit":
        this.engines.relimit(x.concurrent);
        return this.engines.drain();
    }
  }

  /** Moves the clock a tick at a time; each schedule's instants are decided on the runs seen just before. */
  private async advance(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= FTICK) {
      const t = this.engines.now + FTICK;
      const due = this.schedules.filter((s) => s.instants.has(t));
      const active = due.length > 0 ? await this.activeAll() : new Map<string, Running[]>();
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
    const stoppedAt = this.engines.now;
    await this.engines.reopen();
    if (this.engines.gen?.n === this.plan.upgradeAt) this.upgrade = { at: stoppedAt, clean: false };
    await this.reopened(new Map(), false);
  }

  private async reopened(active: Map<string, Running[]>, clean: boolean): Promise<void> {
    const engine = this.engines.engine as Engine;
    for (const s of this.schedules) {
      const d = await engine
        .getSchedule(s.name)
        .describe()
        .catch((e: unknown) => {
          if (e instanceof NotFoundError && s.deleted !== false) return undefined;
          throw e;
        });
      if (d === undefined) {
        s.deleted = true;
        this.trace.push(`  ${s.name} reopened: deleted`);
        continue;
      }
      if (s.deleted === undefined) s.deleted = false;
      this.trace.push(
        `  ${s.name} reopened: ${d.paused ? "paused, " : ""}running [${d.running.join(", ")}], started ${d.started}, skipped ${d.skipped}${d.buffered === undefined ? "" : `, buffered ${d.buffered}`}`,
      );
      s.resyncSpec(d.every, d.overlap, d.catchUp, this.engines.now);
      s.resyncPaused(d.paused);
      s.reopen(this.engines.now, active.get(s.name) ?? [], clean);
      if (s.buffered === null) s.resync(d.paused, d.buffered);
    }
    await this.observe();
  }

  private async scheduleOp(
    x: Extract<FlowAction, { a: "pause" | "resume" | "trigger" | "backfill" | "delete" | "update" }>,
  ): Promise<void> {
    const s = this.schedules[x.s];
    if (s === undefined) return;
    if (s.deleted !== false) {
      const gone = await this.engines.call(`${x.a} ${s.name}`, (e) =>
        x.a === "backfill" ? e.getSchedule(s.name).describe() : x.a === "update" ? this.update(e, s, x) : e.getSchedule(s.name)[x.a](),
      );
      if (!gone.doubt && (gone.ok || !(gone.error instanceof NotFoundError)) && s.deleted === true)
        this.violate(
          "calls",
          `${x.a} of deleted schedule ${s.name} ${gone.ok ? "succeeded" : `failed with ${String(gone.error)}`}; the model expects NotFoundError`,
        );
      return;
    }
    const now = this.engines.now;
    const to = x.a === "backfill" ? s.instants.back(s.instants.latest(now), x.back) : now;
    // A cron spec may give no instant in the hours around the plan: nothing to backfill.
    if (!Number.isFinite(to)) return;
    const from = x.a === "backfill" ? s.instants.back(to, x.len) : now;
    const active = x.a === "trigger" ? ((await this.activeAll()).get(s.name) ?? []) : [];
    const r = await this.engines.call(`${x.a} ${s.name}`, (e) => {
      const h = e.getSchedule(s.name);
      return x.a === "backfill" ? h.backfill(from, to) : x.a === "update" ? this.update(e, s, x) : h[x.a]();
    });
    if (!r.doubt && !r.ok) return this.violate("calls", `${x.a} of ${s.name} failed: ${String(r.error)}`);
    const acknowledged = !r.doubt;
    if (x.a === "trigger") s.trigger(now, active, acknowledged);
    else if (x.a === "backfill") s.backfill(from, to, acknowledged);
    else if (x.a === "delete") s.delete(acknowledged);
    else if (x.a === "update") s.update(x, now, acknowledged);
    else s.pause(x.a === "pause", now, acknowledged);
  }

  private update(e: Engine, s: ScheduleModel, x: Extract<FlowAction, { a: "update" }>): Promise<void> {
    return e
      .getSchedule(s.name)
      .update({ workflow: FJob, every: x.everyMs, overlap: x.overlap, catchUp: x.catchUp, input: { hold: s.pick.holdMs } });
  }

  private async startLimited(n: number, steps: readonly LimitedStep[]): Promise<void> {
    const id = `L${n}`;
    const known = this.limited.get(id);
    const r = await this.engines.call(`start ${id}`, (e) => e.start(FLimited, id, [...steps], ONCE));
    if (r.doubt) {
      if (known === undefined) this.limited.set(id, { id, steps, acked: false, faultsAtStart: -1, cancels: [] });
      return;
    }
    if (known === undefined) {
      if (!r.ok) return this.violate("calls", `start ${id} failed: ${String(r.error)}`);
      this.limited.set(id, { id, steps, acked: true, faultsAtStart: this.engines.faults, cancels: [] });
      return;
    }
    if (known.acked && r.ok) this.violate("calls", `a second start of ${id} succeeded while its first run exists`);
    if (r.ok && !known.acked) this.limited.set(id, { id, steps, acked: true, faultsAtStart: -1, cancels: [] });
  }

  private async startVersioned(n: number): Promise<void> {
    const id = `P${n}`;
    const known = this.versioned.get(id);
    const r = await this.engines.call(`start ${id}`, (e) => e.start("FPatch", id, undefined, ONCE));
    if (r.doubt) {
      if (known === undefined) this.versioned.set(id, { acked: false, startedUpgraded: false });
      return;
    }
    if (!r.ok) {
      if (known === undefined) this.violate("calls", `start ${id} failed: ${String(r.error)}`);
      return;
    }
    if (known?.acked === true) return this.violate("calls", `a second start of ${id} succeeded while its first run exists`);
    this.versioned.set(id, { acked: known === undefined, startedUpgraded: this.engines.upgraded(this.engines.gen?.n ?? 0) });
  }

  private async startBeat(n: number, plan: BeatPlan): Promise<void> {
    const id = `B${n}`;
    const known = this.beats.get(id);
    const r = await this.engines.call(`start ${id}`, (e) => e.start(FBeat, id, plan, ONCE));
    // A start in doubt may have made the run: its outcome is not checked, and a later start may be refused.
    if (r.doubt) {
      if (known === undefined) this.beats.set(id, { id, plan, faultsAtStart: -1 });
      return;
    }
    if (!r.ok && known !== undefined) return;
    if (!r.ok) return this.violate("calls", `start ${id} failed: ${String(r.error)}`);
    if (known !== undefined && known.faultsAtStart !== -1)
      return this.violate("calls", `a second start of ${id} succeeded while its first run exists`);
    this.beats.set(id, { id, plan, faultsAtStart: known === undefined ? this.engines.faults : -1 });
  }

  private async cancelLimited(n: number): Promise<void> {
    const id = `L${n}`;
    const known = this.limited.get(id);
    const before = known === undefined ? undefined : await (this.engines.engine as Engine).status(id);
    const r = await this.engines.call(`cancel ${id}`, (e) => e.run(id).cancel());
    if (r.doubt) return;
    if (!r.ok && !(r.error instanceof FuseeError)) return this.violate("calls", `cancel ${id} threw ${String(r.error)}, not a FuseeError`);
    if (known?.acked === true && r.ok && before !== undefined && !["ok", "failed", "cancelled", "terminated"].includes(before.status))
      known.cancels.push(this.engines.now);
  }

  private async event(family: Family, key: "k0" | "k1", ev: number): Promise<void> {
    const model = this.windows.get(`${family}/${key}`) as WindowModel;
    const now = this.engines.now;
    const options = { eventId: `e${ev}` };
    const r = await this.engines.call(`${family} ${key} e${ev}`, (e) =>
      family === "batch"
        ? e.batch(FCollect, key, ev, Batch.of(this.plan.batch.size, this.plan.batch.timeoutMs), options)
        : e.debounce(FCollect, key, ev, this.debounceRule(), options),
    );
    if (r.doubt) {
      model.blurUntil(now, ev);
      this.sent.push({ family, key, ev, at: now, runId: undefined, retry: undefined });
      return;
    }
    if (!r.ok) return this.violate("windows", `${family} ${key} e${ev} failed: ${String(r.error)}`);
    const runId = (r.value as { id: string }).id;
    const expected = model.send(ev, now);
    this.sent.push({ family, key, ev, at: now, runId, retry: expected === undefined ? undefined : model.retried });
    if (expected !== undefined && expected !== runId)
      this.violate("windows", `${family} ${key} e${ev} at ${now} joined run ${runId}; the model puts it in ${expected}`);
  }

  private debounceRule(): Debounce {
    const d = this.plan.debounce;
    const rule = Debounce.of(d.delayMs);
    return d.maxWaitMs === undefined ? rule : rule.maxWait(d.maxWaitMs);
  }

  private async startAwait(n: number): Promise<void> {
    const id = `T${n}`;
    const known = this.awaiting.get(id);
    const r = await this.engines.call(`start ${id}`, (e) => e.start(FAwait, id, undefined, ONCE));
    if (r.doubt) {
      if (known === undefined) this.awaiting.set(id, "doubt");
      return;
    }
    if (r.ok) {
      if (known === "yes") this.violate("calls", `a second start of ${id} succeeded while its first run exists`);
      this.awaiting.set(id, "yes");
    } else if (known === undefined) this.violate("calls", `start ${id} failed: ${String(r.error)}`);
  }

  private async answer(kind: "complete" | "fail", n: number, value: number | undefined): Promise<void> {
    const id = `T${n}`;
    const token = this.engines.world.tokens.get(id);
    if (token === undefined) return;
    const status = await (this.engines.engine as Engine).status(id);
    const faults = this.engines.faults;
    const r: Outcome = await this.engines.call(`${kind} ${id}`, (e) =>
      kind === "complete" ? e.complete(token, value) : e.fail(token, new Error(`failed ${id}`)),
    );
    const earlier = this.answers.filter((a) => a.id === id);
    this.answers.push({ id, kind, value, doubt: r.doubt, ok: !r.doubt && r.ok, faults: this.engines.faults });
    if (r.doubt) return;
    if (!r.ok && !(r.error instanceof RejectedError))
      return this.violate("tokens", `${kind} ${id} threw ${String(r.error)}, not a RejectedError`);
    if (r.ok && earlier.some((a) => a.ok))
      this.violate("tokens", `${kind} ${id} was accepted, but an earlier answer to its token was acknowledged`);
    const now = this.engines.now;
    const timesOut = (this.engines.world.tokenAt.get(id) ?? now) + AWAIT_TIMEOUT;
    if (r.ok && now > timesOut && faults === this.engines.faults)
      this.violate("tokens", `${kind} ${id} at ${now} was accepted; its wait had timed out at ${timesOut}`);
    // Nothing could have spoiled the token: no answer before, no fault, the run waits, its wait has not timed out.
    const clean =
      earlier.length === 0 &&
      this.engines.faults === 0 &&
      now < timesOut &&
      status !== undefined &&
      !["ok", "failed"].includes(status.status);
    if (!r.ok && clean)
      this.violate("tokens", `${kind} ${id} was refused (${String(r.error)}) though its run waits and no answer came before`);
  }

  // ---- observation ----

  private async activeAll(): Promise<Map<string, Running[]>> {
    const out = new Map<string, Running[]>();
    if (!this.engines.alive) return out;
    const all = await (this.engines.engine as Engine).list(100_000);
    this.note(all);
    const gen = this.engines.gen?.n ?? 0;
    for (const s of this.schedules) {
      for (const r of all) {
        const t = s.instantOf(r.id);
        if (t !== undefined) s.seen(t);
      }
      out.set(
        s.name,
        s.running(all, gen, (id) => this.firstSeen.get(id)),
      );
    }
    return out;
  }

  private note(all: readonly RunStatus[]): void {
    const gen = this.engines.gen?.n ?? 0;
    for (const r of all) if (!this.firstSeen.has(r.id)) this.firstSeen.set(r.id, gen);
    for (const r of all) {
      if (r.status === "stopped") this.violate("recovery", `${r.id} is stopped: ${r.error ?? "no reason given"}`);
    }
  }

  /** Safety at a quiet point: each schedule run is an instant its policy started, once, not early; overlap holds. */
  private async observe(): Promise<void> {
    if (!this.engines.alive) return;
    const all = await (this.engines.engine as Engine).list(100_000);
    this.note(all);
    for (const s of this.schedules) {
      const bound: string[] = [];
      for (const r of all) {
        const t = s.instantOf(r.id);
        if (t === undefined) continue;
        s.seen(t);
        const e = s.expect.get(t);
        if (e === undefined || e === "none")
          this.violate(
            "schedules",
            `${r.id} exists (${r.status}, started at ${r.startedAt}); the model ${e === undefined ? "never dealt with that instant" : "says its policy skips it"}`,
          );
        if (r.startedAt < t) this.violate("schedules", `${r.id} started at ${r.startedAt}, before its instant`);
        if (r.runId !== 1) this.violate("schedules", `${r.id} is run ${r.runId} of its ID: the instant started more than once`);
        if (!s.exempt.has(t) && !s.spared.has(t) && !["ok", "failed", "cancelled", "terminated", "stopped"].includes(r.status))
          bound.push(`${r.id} (${r.status}, since ${r.startedAt})`);
      }
      if (s.pick.overlap !== "allow-all" && bound.length > 1)
        this.violate(
          "schedules",
          `${bound.length} runs of ${s.name} (overlap ${s.pick.overlap}) run at once at ${this.engines.now}: ${bound.join(", ")}`,
        );
    }
    const complaints = this.engines.world.complaints.splice(0);
    for (const c of complaints) this.violate("limits", c);
  }
}
