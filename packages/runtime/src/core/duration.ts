import { ConfigError } from "./errors.js";

/** A duration in milliseconds, or a string such as `"150ms"`, `"10s"`, `"5m"`, `"2h"`, `"7d"`, `"1h30m"`. */
export type Duration = number | string;

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;

/**
 * Converts a {@link Duration} to milliseconds.
 *
 * @example
 * toMillis("1h30m"); // 5_400_000
 * toMillis(250);     // 250
 * @throws ConfigError when the value is negative, not finite or not of the form `<number><unit>...`.
 */
export function toMillis(d: Duration, what = "duration"): number {
  if (typeof d === "number") {
    if (!Number.isFinite(d) || d < 0) throw new ConfigError(`${what} must be a finite, non-negative number of ms; got ${d}`);
    return d;
  }
  const text = d.trim();
  if (text === "") throw new ConfigError(`${what} is empty; write for example "150ms", "10s" or "2h"`);
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let m = PART.exec(text); m !== null; m = PART.exec(text)) {
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
    consumed = PART.lastIndex;
  }
  if (consumed !== text.length) {
    throw new ConfigError(`${what} ${JSON.stringify(d)} is not a duration; write for example "150ms", "10s", "1h30m"`);
  }
  return total;
}
