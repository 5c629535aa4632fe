import { ScheduleCoverage, type RecurrenceSpec } from "./schedule-coverage.js";
import { recurrenceOf, type Recurrence } from "./recurrence.js";
import type { ScheduleStateRecord, ScheduleTickRecord, SystemRecord } from "./system-records.js";

/** What a schedule does when an instant comes while a run it started earlier is still going. */
export type Overlap = "skip" | "buffer-one" | "allow-all" | "cancel-other" | "terminate-other";

/** Which of the instants missed while the engine was down (or paused by a busy event loop) start runs. */
export type CatchUp = "one" | "all" | "none";

/** A validated spec, with the workflow resolved to its type name. */
export interface ScheduleSettings {
  readonly workflow: string;
  readonly everyMs: number | undefined;
  readonly cron: string | undefined;
  readonly timezone: string | undefined;
  readonly overlap: Overlap;
  readonly catchUp: CatchUp;
  readonly input: unknown;
}

/** Where a schedule stands, from `schedule.describe()`. */
export interface ScheduleDescription {
  readonly name: string;
  readonly workflow: string;
  readonly every?: number;
  readonly cron?: string;
  readonly timezone?: string;
  readonly overlap: Overlap;
  readonly catchUp: CatchUp;
  readonly paused: boolean;
  /** Runs started by the schedule: live, triggered, buffered, caught up and backfilled. */
  readonly started: number;
  /** Instants skipped by the overlap or catch-up policy. */
  readonly skipped: number;
  /** The next instants the schedule will start (none while paused). */
  readonly nextTimes: readonly number[];
  /** IDs of the latest runs started live, by trigger or from the buffer, newest first. */
  readonly recentRuns: readonly string[];
  /** Runs of the schedule that may still be going (the ones overlap policies look at). */
  readonly running: readonly string[];
  /** The instant waiting for the running run to end (`overlap: "buffer-one"`). */
  readonly buffered?: number;
  /** Backfills under way: the next instant each will look at, and where it ends. */
  readonly backfills: readonly { readonly next: number; readonly to: number }[];
  /** Why the latest start failed (it is retried), if it did. */
  readonly lastError?: string;
}

/** A backfill under way: the next instant it looks at, and where it ends. */
export interface BackfillState {
  readonly id: string;
  next: number;
  readonly to: number;
  readonly catchUp: boolean;
  /** The spec whose instants it starts, when the schedule's spec changed since it was asked for. */
  spec?: RecurrenceSpec;
  /** True while this process pages through it. */
  running: boolean;
}

/** The latest runs a schedule remembers, for `describe()`. */
const RECENT = 10;
/**
 * Forwarded trigger requests remembered: one asked again after its performer died is asked within
 * the lease and forward times, long before this many later triggers were forwarded.
 */
const TRIGGERED_BY = 64;

/** The run ID of a schedule's instant. */
export function scheduleRunId(name: string, instant: number): string {
  return `${name}@${instant}`;
}

/**
 * A schedule's state as the records of its stream (`$schedule/<name>/<generation>`) make it: a
 * snapshot, then every tick, skip, pause and backfill page applied in order. The engine's live
 * schedules extend it; the data-directory reader folds the same records with it alone, so both
 * describe a schedule the same way.
 */
export class ScheduleState {
  settings: ScheduleSettings;
  protected recurrence: Recurrence;
  protected paused = false;
  /** When the pause in force was recorded (see `ScheduleStateRecord.pausedAt`). */
  protected pausedAt: number | undefined;
  protected cursor = 0;
  protected started = 0;
  /** Runs a backfill page started whose page is not recorded yet: started, but not in `started`. */
  protected startedUnrecorded = 0;
  protected skipped = 0;
  protected covered: ScheduleCoverage;
  protected recent: string[] = [];
  protected readonly active = new Set<string>();
  protected buffered: number | undefined;
  /** Triggered instants whose run was being started when the latest record was written. */
  protected readonly triggering = new Set<number>();
  /** The latest forwarded requests a trigger performed, oldest first (see `ScheduleTickRecord.request`). */
  protected triggeredBy: string[] = [];
  /** Instants whose run may yet appear, and until when they are looked for (see `UnsureInstant`). */
  protected readonly unsure = new Map<number, number>();
  protected readonly backfills = new Map<string, BackfillState>();
  /** Why the latest start failed, if it did (set by the live schedule alone). */
  protected lastError: string | undefined;

  constructor(
    readonly name: string,
    state: ScheduleStateRecord,
  ) {
    this.settings = settingsOf(state);
    this.recurrence = recurrenceOf(this.settings);
    this.covered = new ScheduleCoverage(this.settings);
    this.load(state);
  }

  /** Applies a record of the schedule's stream to its state. */
  apply(record: SystemRecord): void {
    switch (record.kind) {
      case "schedule-state":
        this.load(record);
        return;
      case "schedule-tick":
        this.applyTick(record);
        return;
      case "schedule-skip":
        for (const u of record.unsure ?? []) this.unsure.set(u.instant, u.until);
        this.cover(record.from, record.to);
        this.skipped += record.count;
        this.cursor = Math.max(this.cursor, record.to);
        return;
      case "schedule-pause":
        this.paused = record.paused;
        this.pausedAt = record.paused ? record.at : undefined;
        if (!record.paused) this.cursor = Math.max(this.cursor, record.at);
        return;
      case "schedule-backfill":
        this.backfills.set(record.id, { id: record.id, next: record.from, to: record.to, catchUp: record.catchUp, running: false });
        if (record.catchUp) this.cursor = Math.max(this.cursor, record.to);
        return;
      case "schedule-backfill-page": {
        const b = this.backfills.get(record.id);
        this.covered.add(record.first, record.through, b?.spec);
        this.started += record.started;
        // A page's runs are counted by it, one of an unsure instant too.
        for (const t of this.unsure.keys()) if (record.first <= t && t <= record.through) this.unsure.delete(t);
        if (b !== undefined) {
          b.next = record.through + 1;
          if (b.next > b.to) this.backfills.delete(record.id);
        }
        return;
      }
      default:
        return;
    }
  }

  /** Where the schedule stands at `now`. */
  describeAt(now: number): ScheduleDescription {
    const s = this.settings;
    const nextTimes: number[] = [];
    if (!this.paused) {
      let t: number | undefined = Math.max(this.cursor, now);
      for (let i = 0; i < 3 && t !== undefined; i++) {
        t = this.recurrence.next(t);
        if (t !== undefined) nextTimes.push(t);
      }
    }
    return {
      name: this.name,
      workflow: s.workflow,
      ...(s.everyMs !== undefined ? { every: s.everyMs } : {}),
      ...(s.cron !== undefined ? { cron: s.cron } : {}),
      ...(s.timezone !== undefined ? { timezone: s.timezone } : {}),
      overlap: s.overlap,
      catchUp: s.catchUp,
      paused: this.paused,
      started: this.started + this.startedUnrecorded,
      skipped: this.skipped,
      nextTimes,
      recentRuns: [...this.recent],
      running: [...this.active],
      ...(this.buffered !== undefined ? { buffered: this.buffered } : {}),
      backfills: [...this.backfills.values()].map((b) => ({ next: b.next, to: b.to })),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  /** The whole state as one record, the first of a new generation of the stream. */
  protected snapshotRecord(at: number): ScheduleStateRecord {
    return {
      kind: "schedule-state",
      at,
      ...stateSpec(this.settings),
      paused: this.paused,
      ...(this.paused && this.pausedAt !== undefined ? { pausedAt: this.pausedAt } : {}),
      cursor: this.cursor,
      started: this.started,
      skipped: this.skipped,
      covered: this.covered.list(),
      ...(this.covered.earlierList().length > 0 ? { earlier: this.covered.earlierList() } : {}),
      recent: [...this.recent],
      active: [...this.active],
      ...(this.buffered !== undefined ? { buffered: this.buffered } : {}),
      backfills: [...this.backfills.values()].map((b) => ({
        id: b.id,
        next: b.next,
        to: b.to,
        catchUp: b.catchUp,
        ...(b.spec !== undefined ? { spec: b.spec } : {}),
      })),
      ...(this.triggering.size > 0 ? { triggering: [...this.triggering] } : {}),
      ...(this.unsure.size > 0 ? { unsure: [...this.unsure].map(([instant, until]) => ({ instant, until })) } : {}),
      ...(this.triggeredBy.length > 0 ? { triggeredBy: [...this.triggeredBy] } : {}),
    };
  }

  protected applyTick(r: ScheduleTickRecord): void {
    if (r.request !== undefined && !this.triggeredBy.includes(r.request)) {
      this.triggeredBy.push(r.request);
      if (this.triggeredBy.length > TRIGGERED_BY) this.triggeredBy.shift();
    }
    if (r.outcome === "triggering") {
      this.triggering.add(r.instant);
      return;
    }
    this.triggering.delete(r.instant);
    if (r.outcome === "started") this.unsure.delete(r.instant);
    this.cover(r.instant, r.instant);
    if (r.source === "live") this.cursor = Math.max(this.cursor, r.instant);
    if (r.outcome === "skipped") this.skipped++;
    else if (r.outcome === "buffered") this.buffered = r.instant;
    else {
      this.started++;
      if (this.buffered === r.instant) this.buffered = undefined;
      const id = scheduleRunId(this.name, r.instant);
      this.active.add(id);
      this.recent.unshift(id);
      if (this.recent.length > RECENT) this.recent.length = RECENT;
    }
  }

  protected cover(first: number, last: number): void {
    this.covered.add(first, last);
  }

  private load(s: ScheduleStateRecord): void {
    this.settings = settingsOf(s);
    this.recurrence = recurrenceOf(this.settings);
    this.paused = s.paused;
    this.pausedAt = s.paused ? s.pausedAt : undefined;
    this.cursor = s.cursor;
    this.started = s.started;
    this.skipped = s.skipped;
    this.covered = new ScheduleCoverage(this.settings, s.covered, s.earlier);
    this.recent = [...s.recent];
    this.active.clear();
    for (const id of s.active) this.active.add(id);
    this.buffered = s.buffered;
    for (const b of s.backfills) this.backfills.set(b.id, { ...b, running: this.backfills.get(b.id)?.running ?? false });
    this.triggering.clear();
    for (const t of s.triggering ?? []) this.triggering.add(t);
    this.unsure.clear();
    for (const u of s.unsure ?? []) this.unsure.set(u.instant, u.until);
    this.triggeredBy = [...(s.triggeredBy ?? [])];
  }
}

/** A new schedule's first state record. */
export function initialState(settings: ScheduleSettings, paused: boolean, now: number): ScheduleStateRecord {
  return {
    kind: "schedule-state",
    at: now,
    ...stateSpec(settings),
    paused,
    cursor: now,
    started: 0,
    skipped: 0,
    covered: [],
    recent: [],
    active: [],
    backfills: [],
  };
}

/** The spec fields of a state record. */
export function stateSpec(
  s: ScheduleSettings,
): Pick<ScheduleStateRecord, "workflow" | "everyMs" | "cron" | "timezone" | "overlap" | "catchUp" | "input"> {
  return {
    workflow: s.workflow,
    ...(s.everyMs !== undefined ? { everyMs: s.everyMs } : {}),
    ...(s.cron !== undefined ? { cron: s.cron } : {}),
    ...(s.timezone !== undefined ? { timezone: s.timezone } : {}),
    overlap: s.overlap,
    catchUp: s.catchUp,
    input: s.input,
  };
}

function settingsOf(s: ScheduleStateRecord): ScheduleSettings {
  return {
    workflow: s.workflow,
    everyMs: s.everyMs,
    cron: s.cron,
    timezone: s.timezone,
    overlap: s.overlap as Overlap,
    catchUp: s.catchUp as CatchUp,
    input: s.input,
  };
}

/** Whether two specs of a schedule say the same (an update to an equal spec changes nothing). */
export function sameSettings(a: ScheduleSettings, b: ScheduleSettings): boolean {
  if (a.workflow !== b.workflow || a.everyMs !== b.everyMs || a.cron !== b.cron || a.timezone !== b.timezone) return false;
  if (a.overlap !== b.overlap || a.catchUp !== b.catchUp) return false;
  try {
    return JSON.stringify(a.input) === JSON.stringify(b.input);
  } catch {
    return false;
  }
}
