import { RejectedError } from "../core/errors.js";
import { scheduleRunId, type ScheduleDescription } from "./schedule-runtime.js";
import type { ScheduleSpec } from "./schedule-spec.js";

/** What a schedule handle asks of its engine: the operation done where the schedule's shard is held. */
export interface ScheduleOperations {
  scheduleOp(name: string, op: ScheduleOp, args: readonly number[]): Promise<unknown>;
  /** Replaces the spec of the schedule of that name, which must exist. */
  updateSchedule(name: string, spec: ScheduleSpec): Promise<void>;
}

/** The operations of a schedule handle. */
export type ScheduleOp = "describe" | "pause" | "resume" | "trigger" | "backfill" | "delete";

/**
 * A handle on a schedule, from `engine.schedule(name, spec)`. Calls on a deleted schedule reject
 * with `NotFoundError`.
 *
 * @example
 * const s = await engine.schedule("nightly", { workflow: "Report", cron: "0 2 * * *", timezone: "Europe/Paris" });
 * await s.backfill(Date.parse("2030-01-01"), Date.parse("2030-01-31"));
 * console.log((await s.describe()).started);
 */
export class Schedule {
  /** @internal Handles come from `engine.schedule`. */
  constructor(
    private readonly ops: ScheduleOperations,
    /** The schedule's name. */
    readonly name: string,
  ) {}

  /** The run ID a schedule gives the run of an instant: `"<schedule>@<instantMs>"`. */
  static runId(name: string, instant: number): string {
    return scheduleRunId(name, instant);
  }

  /** Its spec, counts (`started`, `skipped`), next instants, recent and running runs, backfills under way. */
  async describe(): Promise<ScheduleDescription> {
    return (await this.ops.scheduleOp(this.name, "describe", [])) as ScheduleDescription;
  }

  /** Stops starting runs at the schedule's instants until `resume`; backfills and `trigger` still work. */
  pause(): Promise<void> {
    return this.call("pause");
  }

  /** Starts runs again from the next instant on; the instants that passed while paused are not caught up. */
  resume(): Promise<void> {
    return this.call("resume");
  }

  /**
   * Starts a run for the present instant now, as if it were one of the schedule's instants (the
   * overlap policy applies). Its run ID is the schedule's name and the instant; an instant the
   * schedule already dealt with (one started in the same millisecond, or a time an engine whose
   * clock is ahead dealt with) is not reused: the trigger takes the next free millisecond.
   */
  trigger(): Promise<void> {
    return this.call("trigger");
  }

  /**
   * Starts a run for every instant of `[fromMs, toMs]` the schedule has not dealt with yet,
   * regardless of the overlap policy, a page at a time in the background; resolves once the
   * backfill is recorded (it resumes after a restart). Instants whose runs are gone by retention
   * stay remembered and do not start again.
   */
  backfill(fromMs: number, toMs: number): Promise<void> {
    if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs) || fromMs > toMs) {
      return Promise.reject(new RejectedError(`backfill of schedule '${this.name}' needs whole ms from ≤ to; got ${fromMs} to ${toMs}`));
    }
    return this.call("backfill", [fromMs, toMs]);
  }

  /**
   * Replaces the schedule's spec in place: it keeps its name, counts, the instants it dealt with and
   * its pause state (`paused` in the new spec is ignored; use `pause`/`resume`). `NotFoundError`
   * when the schedule was deleted.
   *
   * The new spec takes effect at the update, as `resume` does: its first instant is the first one
   * after the update, and its instants before the update are never started, whatever the catch-up
   * policy (`backfill` starts them). Instants missed while the engine was down are caught up under
   * the spec they were missed under, even when the spec changes as the engine opens. The new spec
   * and the point it takes effect at are recorded together: after a power loss the schedule has
   * both or neither. A backfill under way goes on over the instants of the spec it was asked under;
   * a backfill asked after the update starts the new spec's instants the schedule never dealt with,
   * including those inside a period the old spec's runs covered.
   *
   * @example
   * await engine.getSchedule("nightly").update({ workflow: Report, cron: "0 3 * * *", overlap: "skip" });
   */
  update(spec: ScheduleSpec): Promise<void> {
    return this.ops.updateSchedule(this.name, spec);
  }

  /** Deletes the schedule and its state; runs it started go on. */
  delete(): Promise<void> {
    return this.call("delete");
  }

  private async call(op: ScheduleOp, args: readonly number[] = []): Promise<void> {
    await this.ops.scheduleOp(this.name, op, args);
  }
}
