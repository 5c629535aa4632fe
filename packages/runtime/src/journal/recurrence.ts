import { Cron } from "croner";
import { RejectedError } from "../core/errors.js";

/** The instants (ms since the epoch) a schedule starts runs at. */
export interface Recurrence {
  /** The first instant strictly after `t`, or `undefined` when there is none. */
  next(t: number): number | undefined;
  /** The last instant at or before `t`, or `undefined` when there is none. */
  latest(t: number): number | undefined;
  /** How many instants lie in `[from, to]`. */
  count(from: number, to: number): number;
}

/** Every multiple of `ms` since the epoch: `every: "1h"` starts runs on the hour, UTC. */
function everyRecurrence(ms: number): Recurrence {
  return {
    next: (t) => (Math.floor(t / ms) + 1) * ms,
    latest: (t) => Math.floor(t / ms) * ms,
    count: (from, to) => (to < from ? 0 : Math.floor(to / ms) - Math.ceil(from / ms) + 1),
  };
}

/**
 * The instants of a cron expression (5 fields, or 6 with seconds first), in a time zone (UTC when
 * absent), with daylight-saving gaps and overlaps handled by croner.
 *
 * @throws RejectedError when the expression or the time zone is invalid.
 */
function cronRecurrence(expression: string, timezone: string | undefined): Recurrence {
  let cron: Cron;
  try {
    cron = new Cron(expression, { paused: true, timezone: timezone ?? "Etc/UTC" });
    cron.nextRun(new Date(0));
  } catch (e) {
    throw new RejectedError(`cron '${expression}'${timezone ? ` in time zone '${timezone}'` : ""} is not valid: ${(e as Error).message}`, {
      cause: e,
    });
  }
  const next = (t: number): number | undefined => cron.nextRun(new Date(t))?.getTime();
  return {
    next,
    latest: (t) => cron.previousRuns(1, new Date(t + 1))[0]?.getTime(),
    count(from, to) {
      let n = 0;
      for (let t = next(from - 1); t !== undefined && t <= to; t = next(t)) n++;
      return n;
    },
  };
}

/** The recurrence of a schedule's settings: `every` or `cron`, whichever it has. */
export function recurrenceOf(s: {
  readonly everyMs: number | undefined;
  readonly cron: string | undefined;
  readonly timezone: string | undefined;
}): Recurrence {
  return s.everyMs !== undefined ? everyRecurrence(s.everyMs) : cronRecurrence(s.cron as string, s.timezone);
}
