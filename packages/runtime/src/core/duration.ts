import { ConfigError } from "./errors.js";

/** Units of the compact form: `"150ms"`, `"10s"`, `"5m"`, `"2h"`, `"7d"`, `"2w"`. */
export type DurationUnit = "ms" | "s" | "m" | "h" | "d" | "w";

/** Units written out, singular or plural: `"1 minute"`, `"30 days"`, `"2 weeks"`. */
export type DurationWord =
  | "millisecond"
  | "milliseconds"
  | "msec"
  | "sec"
  | "secs"
  | "second"
  | "seconds"
  | "min"
  | "mins"
  | "minute"
  | "minutes"
  | "hr"
  | "hrs"
  | "hour"
  | "hours"
  | "day"
  | "days"
  | "week"
  | "weeks";

type CompactPart = `${number}${DurationUnit}`;
type WordPart = `${number} ${DurationWord | DurationUnit}`;

/**
 * A duration as text: a count of ms (`"1500"`), compact parts (`"1h30m"`, up to three), or words
 * (`"30 days"`, `"1 hour 30 minutes"`). A literal outside these forms is a compile error.
 */
export type DurationText =
  | `${number}`
  | CompactPart
  | `${CompactPart}${CompactPart}`
  | `${CompactPart}${CompactPart}${CompactPart}`
  | WordPart
  | `${WordPart} ${WordPart}`;

/**
 * A duration in milliseconds, or text such as `"150ms"`, `"1h30m"`, `"30 days"`, `"2 weeks"`.
 * A string only known at run time (read from configuration) goes through {@link toMillis} first.
 *
 * @example
 * await ctx.sleep("30 days");
 * await ctx.sleep(toMillis(process.env.GRACE ?? "1 minute"));
 */
export type Duration = number | DurationText;

/** A duration that cannot be read; it names the text and the call that was handed it. */
export class DurationError extends ConfigError {
  override readonly code = "FUSEE_DURATION";

  constructor(
    /** The value as it was written. */
    readonly text: string,
    /** What the duration was for, for example `"ctx.sleep duration"`. */
    readonly what: string,
    reason: string,
  ) {
    super(`${what} ${text} ${reason}; write ms as a number, or text such as "150ms", "1h30m", "30 days" or "2 weeks"`);
  }
}

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  msec: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1_000,
  sec: 1_000,
  secs: 1_000,
  second: 1_000,
  seconds: 1_000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
  weeks: 604_800_000,
};

// A number, optional spaces, a unit word; parts follow each other with optional spaces between.
const PART = /\s*(\d+(?:\.\d+)?)\s*([a-z]+)/gy;

/**
 * Converts a {@link Duration} to milliseconds; also reads strings only known at run time.
 *
 * @example
 * toMillis("1h30m");   // 5_400_000
 * toMillis("30 days"); // 2_592_000_000
 * toMillis(250);       // 250
 * @throws DurationError when the value is negative, not finite or not a duration.
 */
export function toMillis(d: Duration | string, what = "duration"): number {
  if (typeof d === "number") {
    if (!Number.isFinite(d) || d < 0) throw new DurationError(String(d), what, "is not a finite, non-negative number of ms");
    return d;
  }
  if (typeof d !== "string") throw new DurationError(String(d), what, "is neither a number nor a string");
  const text = d.trim().toLowerCase();
  const shown = JSON.stringify(d);
  if (text === "") throw new DurationError(shown, what, "is empty");
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let m = PART.exec(text); m !== null; m = PART.exec(text)) {
    const unit = UNIT_MS[m[2] as string];
    if (unit === undefined) throw new DurationError(shown, what, `has the unknown unit '${m[2]}'`);
    total += Number(m[1]) * unit;
    consumed = PART.lastIndex;
  }
  if (consumed !== text.length) throw new DurationError(shown, what, "is not a duration");
  return total;
}
