import type { RunStatus } from "@fusee/runtime";
import type { CatchUp, Overlap, SchedulePick } from "./flow-plan.js";
import { Instants } from "./instants.js";

/** What the model says of an instant: its run must start, must not, or either may be right (a fault blurred it). */
export type Expect = "start" | "none" | "either";

const ENDED = new Set(["ok", "failed", "cancelled", "terminated", "stopped"]);

/** A run of the schedule seen running at a quiet point, and when its hold ends. */
export interface Running {
  readonly id: string;
  readonly instant: number;
  /** The earliest time its durable sleep can end. */
  readonly endsAt: number;
  /** It began in an engine that died since: its sleep may end later than `endsAt` (its timer re-set on replay). */
  readonly unsure: boolean;
}

/**
 * The reference model of one schedule: from the spec, the pause state, the catch-up policy and which
 * runs were running when an instant came (observed at the quiet point before it), it decides for
 * every instant whether a run must start, computing the overlap and catch-up policies itself.
 */
export class ScheduleModel {
  readonly expect = new Map<number, Expect>();
  /** Instants started regardless of the overlap policy (backfills, catch-up of all missed instants). */
  readonly exempt = new Set<number>();
  /**
   * Instants started before an update changed the overlap policy: they still count as running for the
   * new policy, but may run beside each other (as the old one let them).
   */
  readonly spared = new Set<number>();
  cursor: number;
  /** `undefined`: a pause or resume is in doubt, until the engine is asked. */
  paused: boolean | undefined;
  /** The instant waiting for the running run to end (`buffer-one`); `null` when the model lost track. */
  buffered: number | undefined | null = undefined;
  /** `undefined`: a delete is in doubt, until the engine is asked. */
  deleted: boolean | undefined = false;
  /** The instants the spec gives. */
  instants: Instants;
  /** The spec before an update in doubt and when it was asked for, until the engine says which spec it keeps. */
  private updatedInDoubt: { readonly before: SchedulePick; readonly at: number } | undefined;
  /** Instants triggers took after the millisecond they were asked at, and that millisecond. */
  private readonly triggeredAt = new Map<number, number>();
  /** When a resume in doubt was asked for, until the engine says whether it took effect. */
  private resumedInDoubt: number | undefined;

  constructor(
    readonly name: string,
    public pick: SchedulePick,
    createdAt: number,
  ) {
    this.cursor = createdAt;
    this.paused = pick.paused;
    this.instants = new Instants(pick, createdAt);
  }

  prefix(): string {
    return `${this.name}@`;
  }

  instantOf(id: string): number | undefined {
    return id.startsWith(this.prefix()) ? Number(id.slice(this.prefix().length)) : undefined;
  }

  /** The runs of this schedule among `all` that are running. */
  running(all: readonly RunStatus[], generation: number, generationOf: (id: string) => number | undefined): Running[] {
    const out: Running[] = [];
    for (const s of all) {
      const instant = this.instantOf(s.id);
      if (instant === undefined || ENDED.has(s.status)) continue;
      out.push({ id: s.id, instant, endsAt: s.startedAt + this.pick.holdMs, unsure: generationOf(s.id) !== generation });
    }
    return out;
  }

  /** A live instant `t` fired by the schedule's timer; `active`: the runs running at the quiet point before it. */
  live(t: number, active: readonly Running[]): void {
    if (this.deleted === true || this.paused === true || t <= this.cursor) return;
    if (this.paused === undefined || this.deleted === undefined) {
      this.blur(t);
      return;
    }
    this.cursor = t;
    this.decide(t, active, t);
  }

  /**
   * `trigger()` at `now`, acknowledged (or in doubt: then whatever it did is blurred). The engine
   * takes the first millisecond from `now` no instant took; when one of those it passes over is
   * itself in doubt (a trigger whose record a crash may have lost), the engine may have taken that
   * one instead, which is already blurred, and the trigger's own is blurred too.
   */
  trigger(now: number, active: readonly Running[], acknowledged: boolean): void {
    let t = now;
    let passedDoubt = false;
    for (let e = this.expect.get(t); e !== undefined; e = this.expect.get(++t)) passedDoubt ||= e === "either";
    // The engine records a trigger before its run starts, so a run a trigger in doubt started counts
    // as running once the engine recovers: under skip and buffer-one nothing may start beside it.
    if (t > now) this.triggeredAt.set(t, now);
    if (!acknowledged || passedDoubt) return this.blur(t);
    this.decide(t, active, t);
  }

  /** The earliest its run may start: its instant, or the time of the trigger that took a later millisecond. */
  notBefore(t: number): number {
    return this.triggeredAt.get(t) ?? t;
  }

  pause(paused: boolean, now: number, acknowledged: boolean): void {
    if (!acknowledged) {
      this.paused = undefined;
      this.resumedInDoubt = paused ? undefined : now;
      return;
    }
    if (this.paused === false && !paused) return;
    if (this.paused === true && paused) return;
    if (!paused) this.cursor = Math.max(this.cursor, now);
    this.paused = paused;
  }

  /** `backfill(from, to)`: every instant of the range the schedule never dealt with starts, whatever runs. */
  backfill(from: number, to: number, acknowledged: boolean): void {
    for (let t = this.first(from - 1); t <= to; t = this.first(t)) {
      const e = this.expect.get(t);
      if (e !== undefined) continue;
      this.exempt.add(t);
      if (!acknowledged) this.blur(t);
      else {
        this.expect.set(t, "start");
        this.exempt.add(t);
      }
    }
  }

  /**
   * The engine opened again at `now` after downtime: the instants missed meanwhile follow the
   * catch-up policy. `clean`: nothing unsynced was lost, so the engine's cursor is the model's.
   */
  reopen(now: number, active: readonly Running[], clean: boolean): void {
    const latest = this.instants.latest(now);
    if (this.deleted === true || this.paused === true || latest <= this.cursor) return;
    const missed: number[] = [];
    for (let t = this.first(this.cursor); t <= latest; t = this.first(t)) missed.push(t);
    this.cursor = latest;
    if (this.paused === undefined) {
      for (const t of missed) this.blur(t);
      return;
    }
    const policy = this.pick.catchUp;
    if (policy === "all" && missed.length > 1) {
      for (const t of missed) {
        if (this.expect.get(t) === "either") continue;
        this.expect.set(t, "start");
        this.exempt.add(t);
      }
      return;
    }
    if (policy === "all" && !clean) return this.blur(latest);
    for (const t of missed.slice(0, -1)) this.expect.set(t, this.expect.get(t) === "either" ? "either" : "none");
    if (policy === "none") {
      this.expect.set(latest, this.expect.get(latest) === "either" ? "either" : "none");
      return;
    }
    // After a fault that lost records the model does not know which runs the engine thinks run.
    if (!clean && (this.pick.overlap === "skip" || this.pick.overlap === "buffer-one")) return this.blur(latest);
    // Runs whose hold ended while the engine was down end as it opens, racing the catch-up.
    const racing = active.map((r) => ({ ...r, unsure: r.unsure || r.endsAt <= now }));
    this.decide(latest, racing, now);
  }

  /**
   * `update()` at `now`: the new spec takes effect at the update, whose record holds the spec and the
   * cursor together; its instants before the update are never due, and the new overlap policy
   * decides from here on. In doubt, the engine is asked after the fault.
   */
  update(spec: { everyMs: number; overlap: Overlap; catchUp: CatchUp }, now: number, acknowledged: boolean): void {
    const before = this.pick;
    if (spec.overlap !== before.overlap) this.spare();
    this.pick = { ...before, everyMs: spec.everyMs, cron: undefined, overlap: spec.overlap, catchUp: spec.catchUp };
    this.instants = new Instants(this.pick, now);
    if (!acknowledged) {
      this.updatedInDoubt = { before, at: now };
      return;
    }
    this.cursor = Math.max(this.cursor, now);
  }

  /**
   * The spec the engine recovered, after an update in doubt. When the update took, its spec and
   * cursor did together: the new spec's instants before it are not due (nor dealt with: a backfill
   * may start them), and the reopen catches up those after it. When it did not, whatever either spec gave up to `now` is blurred.
   */
  resyncSpec(everyMs: number | undefined, overlap: Overlap, catchUp: CatchUp, now: number): void {
    if (this.updatedInDoubt === undefined) return;
    const { before, at } = this.updatedInDoubt;
    this.updatedInDoubt = undefined;
    const took = everyMs === this.pick.everyMs && overlap === this.pick.overlap && catchUp === this.pick.catchUp;
    if (overlap !== this.pick.overlap) this.spare();
    // No interval: the update did not take, and the cron spec stays.
    this.pick = everyMs === undefined ? { ...before, overlap, catchUp } : { ...this.pick, everyMs, overlap, catchUp };
    const old = new Instants(before, now);
    this.instants = new Instants(this.pick, now);
    if (took) {
      this.cursor = Math.max(this.cursor, at);
      return;
    }
    if (this.deleted !== false || this.paused === true) return;
    for (const instants of [old, this.instants]) {
      for (let t = instants.after(this.cursor); t <= now; t = instants.after(t)) this.blur(t);
    }
    this.cursor = Math.max(this.cursor, this.instants.latest(now));
  }

  /** `delete()`: no instant starts from now on, the buffered one neither; runs it started go on. */
  delete(acknowledged: boolean): void {
    if (typeof this.buffered === "number") this.expect.set(this.buffered, acknowledged ? "none" : "either");
    this.buffered = undefined;
    this.deleted = acknowledged ? true : undefined;
  }

  /** A fault may have lost what the engine recorded of instant `t`. */
  blur(t: number): void {
    this.expect.set(t, "either");
    if (this.pick.overlap !== "buffer-one" && this.buffered === undefined) return;
    // Once the model loses track of the buffer, a delete may drop the instant it buffered before.
    if (typeof this.buffered === "number") this.expect.set(this.buffered, "either");
    this.buffered = null;
  }

  /** The pause state the engine recovered, after a pause or resume in doubt. */
  resyncPaused(paused: boolean): void {
    if (this.paused !== undefined) return;
    this.paused = paused;
    // A resume that took effect moved the cursor: the instants of the pause are not caught up.
    if (!paused && this.resumedInDoubt !== undefined) this.cursor = Math.max(this.cursor, this.resumedInDoubt);
    this.resumedInDoubt = undefined;
  }

  /** The engine's own account after a fault: the pause state and the buffered instant. */
  resync(paused: boolean, buffered: number | undefined): void {
    this.paused = paused;
    this.buffered = buffered;
  }

  /** A run of the buffered instant was seen: the buffer is free again. */
  seen(instant: number): void {
    if (this.buffered === instant) this.buffered = undefined;
  }

  private decide(t: number, active: readonly Running[], now: number): void {
    const bound = active.filter((r) => !this.exempt.has(r.instant));
    const sure = bound.filter((r) => !r.unsure && r.endsAt > now);
    const maybe = bound.filter((r) => r.unsure || r.endsAt === now);
    switch (this.pick.overlap) {
      case "allow-all":
      case "cancel-other":
      case "terminate-other":
        this.expect.set(t, "start");
        return;
      case "skip":
        this.expect.set(t, sure.length > 0 ? "none" : maybe.length > 0 ? "either" : "start");
        return;
      case "buffer-one":
        if (sure.length === 0 && maybe.length === 0) this.expect.set(t, "start");
        else if (this.buffered === null || (maybe.length > 0 && sure.length === 0)) this.blur(t);
        else if (this.buffered === undefined) {
          // Buffered: it starts once the running run ends.
          this.expect.set(t, "start");
          this.buffered = t;
        } else this.expect.set(t, "none");
        return;
    }
  }

  /** Every instant the model lets start so far may run beside the others: an update changed the overlap policy. */
  private spare(): void {
    for (const [t, e] of this.expect) if (e !== "none") this.spared.add(t);
  }

  /** The first instant after `t`. */
  private first(t: number): number {
    return this.instants.after(t);
  }
}
