import { toMillis, type Duration } from "../core/duration.js";
import { RejectedError } from "../core/errors.js";
import type { WorkflowClass } from "../workflow/registry.js";
import { recurrenceOf } from "../journal/recurrence.js";
import type { CatchUp, Overlap, ScheduleSettings } from "../journal/schedule-state.js";

export type { CatchUp, Overlap, ScheduleSettings } from "../journal/schedule-state.js";

/**
 * A schedule: which workflow to start, when, and what to do about overlaps and missed instants.
 * Each instant starts a run with the ID `"<schedule>@<instantMs>"`, so an instant never starts twice.
 *
 * @example
 * const nightly = await engine.schedule("nightly", { workflow: "Report", cron: "0 2 * * *", timezone: "Europe/Paris" });
 * const ticker = await engine.schedule("ticker", { workflow: Tick, every: "5m", overlap: "buffer-one", input: { full: false } });
 */
export interface ScheduleSpec {
  /** The workflow type (its name or class) each instant starts. */
  workflow: string | WorkflowClass;
  /** Start a run at every multiple of this duration since the epoch (UTC). One of `every` and `cron`. */
  every?: Duration;
  /** Start a run at each instant of this cron expression (5 fields, or 6 with seconds first). */
  cron?: string;
  /** The IANA time zone `cron` is read in (`"Europe/Paris"`); UTC by default. */
  timezone?: string;
  /**
   * When a run of the schedule is still going: `"skip"` the instant (default), `"buffer-one"` (start
   * it once the running one ends; later instants skip), `"allow-all"`, `"terminate-other"` (terminate
   * the running ones, then start), or `"cancel-other"` (ask the running ones to cancel, then start).
   */
  overlap?: Overlap;
  /**
   * Instants missed while the engine was down: start the latest of them (`"one"`, default), all of
   * them (`"all"`, paged like a backfill), or none.
   */
  catchUp?: CatchUp;
  /** Create the schedule paused. Applies when the schedule is created, not when its spec is updated. */
  paused?: boolean;
  /** The input of every run the schedule starts. */
  input?: unknown;
}

const OVERLAPS: readonly Overlap[] = ["skip", "buffer-one", "allow-all", "cancel-other", "terminate-other"];
const CATCH_UPS: readonly CatchUp[] = ["one", "all", "none"];

/** Checks a spec; `RejectedError` naming the schedule and the field when it cannot work. */
export function checkScheduleSpec(
  name: string,
  spec: ScheduleSpec,
  resolve: (workflow: string | WorkflowClass) => string,
): ScheduleSettings {
  const where = `schedule '${name}'`;
  if (spec === null || typeof spec !== "object") throw new RejectedError(`${where} needs a spec object`);
  if (spec.workflow === undefined) throw new RejectedError(`${where} needs 'workflow', the workflow type its instants start`);
  const workflow = resolve(spec.workflow);
  if ((spec.every === undefined) === (spec.cron === undefined)) {
    throw new RejectedError(`${where} needs exactly one of 'every' and 'cron'`);
  }
  let everyMs: number | undefined;
  if (spec.every !== undefined) {
    try {
      everyMs = toMillis(spec.every, `${where}: every`);
    } catch (e) {
      throw new RejectedError((e as Error).message, { cause: e });
    }
    if (!Number.isInteger(everyMs) || everyMs < 1)
      throw new RejectedError(`${where}: every must be a whole number of ms ≥ 1; got ${JSON.stringify(spec.every)}`);
  }
  if (spec.cron !== undefined && typeof spec.cron !== "string") throw new RejectedError(`${where}: cron must be a string`);
  if (spec.timezone !== undefined && spec.cron === undefined)
    throw new RejectedError(`${where}: timezone applies to 'cron' schedules only`);
  const overlap = spec.overlap ?? "skip";
  if (!OVERLAPS.includes(overlap))
    throw new RejectedError(`${where}: overlap must be one of ${OVERLAPS.map((o) => `'${o}'`).join(", ")}; got '${String(overlap)}'`);
  const catchUp = spec.catchUp ?? "one";
  if (!CATCH_UPS.includes(catchUp))
    throw new RejectedError(`${where}: catchUp must be one of ${CATCH_UPS.map((o) => `'${o}'`).join(", ")}; got '${String(catchUp)}'`);
  const settings: ScheduleSettings = { workflow, everyMs, cron: spec.cron, timezone: spec.timezone, overlap, catchUp, input: spec.input };
  recurrenceOf(settings);
  return settings;
}
