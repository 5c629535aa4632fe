import type { DataDirRun, ExportedJournal, ExportedRecord, ScheduleDescription } from "@fusee/runtime";
import { clip, instant, toJson } from "../data-dir.js";
import { recordFields, recordPayload } from "../record-text.js";
import { html, layout, raw, runPath, type Html } from "./html.js";
import { RUN_STATUSES, type RunQuery } from "./run-query.js";

/** The runs page: a filter form and the runs, newest first. */
export function runsPage(runs: readonly DataDirRun[], query: RunQuery, dir: string): string {
  const options = ["", ...RUN_STATUSES].map((s) => html`<option value="${s}"${raw(s === (query.status ?? "") ? " selected" : "")}>${s === "" ? "any status" : s}</option>`);
  const form = html`<form method="get" action="/">
<label>Status <select name="status">${options}</select></label>
<label>Type <input name="type" value="${query.type ?? ""}" placeholder="any type"></label>
<label>Limit <input name="limit" value="${query.limit}" size="5"></label>
<button type="submit">Filter</button></form>`;
  const rows = runs.map(
    (r) => html`<tr><td class="mono"><a href="${runPath(r.id)}">${r.id}</a></td><td>${r.type}</td><td>${r.runId}</td>${statusCell(r.status)}
<td>${instant(r.startedAt)}</td><td>${instant(r.endedAt)}</td><td>${r.records}</td><td class="mono">${attributes(r)}</td></tr>`,
  );
  const table =
    runs.length === 0
      ? html`<p class="muted">no runs</p>`
      : html`<table><thead><tr><th>ID</th><th>Type</th><th>Run</th><th>Status</th><th>Started</th><th>Ended</th><th>Records</th><th>Attributes</th></tr></thead>
<tbody>${rows}</tbody></table>`;
  return layout("Runs", html`<p class="muted">${dir}</p>${form}${table}`);
}

/** One run: its status, its attributes and its journal, with the records counted by kind. */
export function runPage(run: DataDirRun, journal: ExportedJournal | undefined, journalError: string | undefined): string {
  const facts = html`<table><tbody>
<tr><th>Type</th><td>${run.type}</td></tr><tr><th>Run</th><td>${run.runId}</td></tr><tr><th>Status</th>${statusCell(run.status)}</tr>
<tr><th>Started</th><td>${instant(run.startedAt)}</td></tr><tr><th>Ended</th><td>${instant(run.endedAt)}</td></tr>
<tr><th>Records</th><td>${run.records}</td></tr><tr><th>Attributes</th><td class="mono">${attributes(run)}</td></tr>
</tbody></table>`;
  if (journal === undefined) {
    return layout(run.id, html`${facts}<h2>Journal</h2><p class="error">${journalError ?? "the journal could not be read"}</p>`);
  }
  const counts = new Map<string, number>();
  for (const r of journal.records) counts.set(r.kind, (counts.get(r.kind) ?? 0) + 1);
  const byKind = html`<p>${[...counts].map(([kind, n], i) => html`${i > 0 ? ", " : ""}<code>${kind}</code> ${n}`)}</p>`;
  const rows = journal.records.map(
    (r, position) => html`<tr><td>${position}</td><td>${instant(r.at)}</td><td><code>${r.kind}</code></td><td class="mono">${recordFields(r)}</td><td><pre>${recordPayload(r, 2000, 2)}</pre></td></tr>`,
  );
  return layout(
    run.id,
    html`${facts}<h2>Journal</h2>${byKind}<table><thead><tr><th>#</th><th>At</th><th>Kind</th><th>Fields</th><th>Payload</th></tr></thead>
<tbody>${rows}</tbody></table>`,
  );
}

/** The schedules: spec, state and the next instants. */
export function schedulesPage(schedules: readonly ScheduleDescription[]): string {
  if (schedules.length === 0) return layout("Schedules", html`<p class="muted">no schedules</p>`);
  const rows = schedules.map(
    (s) => html`<tr><td class="mono">${s.name}</td><td>${s.workflow}</td><td class="mono">${when(s)}</td><td>${s.overlap}</td><td>${s.paused ? "paused" : "active"}</td>
<td>${s.started}</td><td>${s.skipped}</td><td>${s.nextTimes.map((t, i) => html`${i > 0 ? raw("<br>") : ""}${instant(t)}`)}</td>
<td class="mono">${s.recentRuns.map((id, i) => html`${i > 0 ? raw("<br>") : ""}<a href="${runPath(id)}">${id}</a>`)}</td></tr>`,
  );
  return layout(
    "Schedules",
    html`<table><thead><tr><th>Name</th><th>Workflow</th><th>When</th><th>Overlap</th><th>State</th><th>Started</th><th>Skipped</th><th>Next</th><th>Recent runs</th></tr></thead>
<tbody>${rows}</tbody></table>`,
  );
}

/** A page for a request that could not be answered. */
export function errorPage(status: number, message: string): string {
  return layout(status === 404 ? "Not found" : status === 400 ? "Bad request" : "Error", html`<p class="error">${message}</p>`);
}

function statusCell(status: string): Html {
  return html`<td class="status-${status}">${status}</td>`;
}

function attributes(run: DataDirRun): string {
  if (run.attributesError !== undefined) return "(unreadable: pass --keys?)";
  return Object.keys(run.attributes).length === 0 ? "" : clip(toJson(run.attributes), 120);
}


/** When a schedule fires: its interval or its cron expression and time zone. */
function when(s: ScheduleDescription): string {
  if (s.cron !== undefined) return `cron ${s.cron}${s.timezone === undefined ? "" : ` (${s.timezone})`}`;
  return s.every === undefined ? "-" : `every ${duration(s.every)}`;
}

function duration(ms: number): string {
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1_000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
