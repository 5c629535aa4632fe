import type { ScheduleDescription } from "@fusee/runtime";
import { instant } from "../data-dir.js";
import { html, layout, raw, runPath, type PageEnv } from "./html.js";
import { scheduleTiming } from "./schedule-timing.js";

/** The schedules: spec, state and the next instants. */
export function schedulesPage(schedules: readonly ScheduleDescription[], env: PageEnv): string {
  if (schedules.length === 0) return layout("Schedules", html`<p class="muted">no schedules</p>`, env, { page: "schedules" });
  const rows = schedules.map(
    (
      s,
    ) => html`<tr id="schedule-${s.name}"><td class="mono">${s.name}</td><td>${s.workflow}</td><td class="mono">${scheduleTiming(s)}</td><td>${s.overlap}</td><td>${s.paused ? "paused" : "active"}</td>
<td>${s.started}</td><td>${s.skipped}</td><td>${s.nextTimes.map((t, i) => html`${i > 0 ? raw("<br>") : ""}${instant(t)}`)}</td>
<td class="mono">${s.recentRuns.map((id, i) => html`${i > 0 ? raw("<br>") : ""}<a href="${runPath(id)}">${id}</a>`)}</td></tr>`,
  );
  return layout(
    "Schedules",
    html`<table><thead><tr><th>Name</th><th>Workflow</th><th>When</th><th>Overlap</th><th>State</th><th>Started</th><th>Skipped</th><th>Next</th><th>Recent runs</th></tr></thead>
<tbody>${rows}</tbody></table>`,
    env,
    { page: "schedules" },
  );
}
