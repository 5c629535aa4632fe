import type { ScheduleDescription } from "@fusee/runtime";

/** When a schedule fires: `every 1h`, or `cron 0 2 * * * (Europe/Paris)`. */
export function scheduleTiming(s: ScheduleDescription): string {
  if (s.cron !== undefined) return `cron ${s.cron}${s.timezone === undefined ? "" : ` (${s.timezone})`}`;
  return s.every === undefined ? "-" : `every ${duration(s.every)}`;
}

function duration(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
