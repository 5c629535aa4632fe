import type { DataDirRun, ScheduleDescription } from "@fusee/runtime";
import { instant } from "../data-dir.js";
import { html, runPath, type Html } from "./html.js";
import { scheduleTiming } from "./schedule-timing.js";
import { statusBadge } from "./status-badge.js";

/**
 * Where a scheduled run stands in its schedule: the schedule and when it fires, the instant the run
 * is for, its place among the schedule's runs in the directory (by instant) with links to the one
 * before and after it, and the schedule's next instants. `undefined` for a run no schedule started.
 */
export function schedulePosition(
  run: DataDirRun,
  runs: readonly DataDirRun[],
  schedule: ScheduleDescription | undefined,
): Html | undefined {
  const mine = run.schedule;
  if (mine === undefined) return undefined;
  const siblings = runs
    .filter((r) => r.schedule?.name === mine.name)
    .sort((a, b) => (a.schedule?.instant ?? 0) - (b.schedule?.instant ?? 0));
  const index = siblings.findIndex((r) => r.id === run.id);
  const before = siblings[index - 1];
  const after = siblings[index + 1];
  const link = (r: DataDirRun | undefined, none: Html | string): Html =>
    r === undefined ? html`${none}` : html`<a href="${runPath(r.id)}">${r.id}</a> ${statusBadge(r.status)}`;
  const next =
    schedule === undefined
      ? html`<span class="muted">the schedule is no longer in the directory</span>`
      : schedule.paused
        ? html`<span class="muted">the schedule is paused</span>`
        : html`${schedule.nextTimes.map((t, i) => html`${i > 0 ? ", " : ""}${instant(t)}`)}`;
  return html`<table class="facts schedule-position"><tbody>
<tr><th>Schedule</th><td><a href="${`/schedules#${encodeURIComponent(`schedule-${mine.name}`)}`}">${mine.name}</a>${schedule !== undefined ? html` <span class="muted">${scheduleTiming(schedule)}, overlap ${schedule.overlap}</span>` : ""}</td></tr>
<tr><th>Instant</th><td>${instant(mine.instant)}</td></tr>
<tr><th>Position</th><td>run ${index + 1} of the ${siblings.length} of this schedule in the directory</td></tr>
<tr><th>Before</th><td>${link(before, html`<span class="muted">none in the directory</span>`)}</td></tr>
<tr><th>After</th><td>${link(after, html`<span class="muted">none yet</span>`)}</td></tr>
<tr><th>Next instants</th><td>${next}</td></tr>
</tbody></table>`;
}
