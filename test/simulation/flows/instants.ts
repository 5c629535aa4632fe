import type { SchedulePick } from "./flow-plan.js";

/** A cron expression (minute hour day-of-month month day-of-week) read in an IANA time zone. */
export interface CronPick {
  readonly expr: string;
  readonly zone: string;
}

const MINUTE = 60_000;
/** How far around the plan's start the cron instants are listed: plans last minutes, not hours. */
const SPAN = 3 * 3600_000;

/**
 * The instants a schedule's spec gives, computed by the model on its own: multiples of the interval,
 * or, for a cron spec, every minute whose wall clock in the zone (as `Intl.DateTimeFormat` tells it)
 * matches the expression, found by walking the minutes one by one. A wall-clock time that a DST
 * transition skips never matches; one it repeats matches at both instants.
 */
export class Instants {
  private readonly list: number[] = [];

  constructor(
    private readonly pick: Pick<SchedulePick, "everyMs" | "cron">,
    around: number,
  ) {
    const cron = pick.cron;
    if (cron === undefined) return;
    const fields = cron.expr.split(" ");
    const wall = new Intl.DateTimeFormat("en-US", {
      timeZone: cron.zone,
      hourCycle: "h23",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      weekday: "short",
    });
    const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    for (let t = Math.floor((around - SPAN) / MINUTE) * MINUTE; t <= around + SPAN; t += MINUTE) {
      const parts = new Map(wall.formatToParts(t).map((p) => [p.type, p.value]));
      const values = [
        Number(parts.get("minute")),
        Number(parts.get("hour")),
        Number(parts.get("day")),
        Number(parts.get("month")),
        days.indexOf(parts.get("weekday") ?? ""),
      ];
      if (values.every((v, i) => matches(fields[i] ?? "*", v))) this.list.push(t);
    }
  }

  has(t: number): boolean {
    return this.pick.cron === undefined ? t % this.pick.everyMs === 0 : this.list.includes(t);
  }

  /** The first instant after `t`. */
  after(t: number): number {
    if (this.pick.cron === undefined) return (Math.floor(t / this.pick.everyMs) + 1) * this.pick.everyMs;
    return this.list.find((x) => x > t) ?? Infinity;
  }

  /** The latest instant at or before `t`. */
  latest(t: number): number {
    if (this.pick.cron === undefined) return Math.floor(t / this.pick.everyMs) * this.pick.everyMs;
    return this.list.filter((x) => x <= t).pop() ?? -Infinity;
  }

  /** The instant `n` instants before the instant `t`. */
  back(t: number, n: number): number {
    if (this.pick.cron === undefined) return t - n * this.pick.everyMs;
    const i = this.list.indexOf(t);
    return i < 0 ? t : (this.list[Math.max(0, i - n)] as number);
  }
}

/** One cron field: `*`, `*\/n`, `a`, `a-b`, `a-b/n`, or a list of them. */
function matches(field: string, v: number): boolean {
  return field.split(",").some((part) => {
    const [range = "*", stepText] = part.split("/");
    const step = stepText === undefined ? 1 : Number(stepText);
    const [lo, hi] = range === "*" ? [0, 59] : range.includes("-") ? range.split("-").map(Number) : [Number(range), Number(range)];
    return v >= (lo as number) && v <= (hi as number) && (v - (range === "*" ? 0 : (lo as number))) % step === 0;
  });
}
