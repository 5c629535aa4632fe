import { NotFoundError, type Engine, type RunStatus } from "@fusee/runtime";
import type { FlowContext } from "./flow-context.js";
import type { FlowEngines } from "./flow-engine.js";
import type { FlowAction } from "./flow-plan.js";
import { FlowViolation, type FlowProperty } from "./flow-properties.js";
import { FJob } from "./flow-workflows.js";
import { ScheduleModel, type Running } from "./schedule-model.js";

/** The schedules of a plan: created at its start, driven by its actions, checked against their models at quiet points. */
export class FlowSchedules {
  readonly schedules: ScheduleModel[] = [];
  /** The engine generation that first saw each schedule run, to tell runs an engine began before a fault. */
  private readonly firstSeen = new Map<string, number>();

  constructor(private readonly ctx: FlowContext) {}

  private get engines(): FlowEngines {
    return this.ctx.engines;
  }

  private violate(property: FlowProperty, detail: string): void {
    this.ctx.violate(property, detail);
  }

  private get trace(): string[] {
    return this.ctx.trace;
  }

  /** Creates the plan's schedules on the first engine. */
  async create(): Promise<void> {
    for (let i = 0; i < this.ctx.plan.schedules.length; i++) {
      const pick = this.ctx.plan.schedules[i] as (typeof this.ctx.plan.schedules)[number];
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
  }

  async reopened(active: Map<string, Running[]>, clean: boolean): Promise<void> {
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
  }

  async op(x: Extract<FlowAction, { a: "pause" | "resume" | "trigger" | "backfill" | "delete" | "update" }>): Promise<void> {
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

  async activeAll(): Promise<Map<string, Running[]>> {
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

  note(all: readonly RunStatus[]): void {
    const gen = this.engines.gen?.n ?? 0;
    for (const r of all) if (!this.firstSeen.has(r.id)) this.firstSeen.set(r.id, gen);
    // A versioned run stops where the model of its versions says (`flow-versions.ts`, checked at the end).
    for (const r of all) {
      if (r.status === "stopped" && r.type !== "FPatch") this.violate("recovery", `${r.id} is stopped: ${r.error ?? "no reason given"}`);
    }
  }

  /** Safety at a quiet point: each schedule run is an instant its policy started, once, not early; overlap holds. */
  async observe(): Promise<void> {
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
        if (r.startedAt < s.notBefore(t)) this.violate("schedules", `${r.id} started at ${r.startedAt}, before its instant`);
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
  }
}
