import type { DataDirRun, ExportedJournal, ExportedRecord, ExportedValue, JsonValue, ScheduleDescription } from "@fusee/runtime";
import { clip, instant, toJson } from "../data-dir.js";
import { recordFields } from "../record-text.js";
import { escapeHtml, html, layout, raw, runPath, type Html } from "./html.js";
import { RUN_STATUSES, type RunQuery } from "./run-query.js";
import { timeline } from "./timeline.js";
import { showValue } from "./value-view.js";

/** The runs page: the filters, one page of runs (newest first) and the link to the next page. */
export function runsPage(
  runs: readonly DataDirRun[],
  query: RunQuery,
  dir: string,
  next: string | undefined,
  token: string | undefined,
): string {
  const options = ["", ...RUN_STATUSES].map(
    (s) => html`<option value="${s}"${raw(s === (query.status ?? "") ? " selected" : "")}>${s === "" ? "any status" : s}</option>`,
  );
  const attrs = Object.entries(query.attributes)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ");
  const form = html`<form class="filters" method="get" action="/">
<label>ID <input name="q" value="${query.q ?? ""}" placeholder="part of an ID"></label>
<label>Status <select name="status">${options}</select></label>
<label>Type <input name="type" value="${query.type ?? ""}" placeholder="any type"></label>
<label>Attributes <input name="attr" value="${attrs}" placeholder="name=value, …"></label>
<label>From <input name="from" type="datetime-local" value="${localInput(query.from)}"></label>
<label>To <input name="to" type="datetime-local" value="${localInput(query.to)}"></label>
<label>Per page <input name="limit" value="${query.limit}" size="4" style="width:3rem"></label>
<button type="submit">Filter</button></form>`;
  const rows = runs.map(
    (
      r,
    ) => html`<tr data-id="${r.id}"><td class="mono"><a href="${runPath(r.id)}">${r.id}</a></td><td>${r.type}</td><td>${r.runId}</td>${statusCell(r.status)}
<td>${instant(r.startedAt)}</td><td>${instant(r.endedAt)}</td><td>${r.records}</td><td class="mono">${attributes(r)}</td></tr>`,
  );
  const table =
    runs.length === 0
      ? html`<p class="muted">no runs</p>`
      : html`<table class="runs"><thead><tr><th>ID</th><th>Type</th><th>Run</th><th>Status</th><th>Started</th><th>Ended</th><th>Records</th><th>Attributes</th></tr></thead>
<tbody>${rows}</tbody></table>`;
  const pager = html`<p class="pager">${query.cursor !== undefined ? html`<a href="${withCursor(query, undefined)}">first page</a>` : ""}${
    next !== undefined ? html`<a class="next" href="${withCursor(query, next)}">next page →</a>` : ""
  }</p>`;
  return layout("Runs", html`<p class="muted">${dir}</p>${form}${table}${pager}`, {
    page: "runs",
    ...(token !== undefined ? { token } : {}),
  });
}

/** One run: its status, a timeline of its journal, the journal with payloads as the user's types, and the actions when allowed. */
export function runPage(
  run: DataDirRun,
  journal: ExportedJournal | undefined,
  journalError: string | undefined,
  token: string | undefined,
): string {
  const facts = html`<table class="facts"><tbody>
<tr><th>Type</th><td>${run.type}</td></tr><tr><th>Run</th><td>${run.runId}</td></tr><tr><th>Status</th>${statusCell(run.status)}</tr>
<tr><th>Started</th><td>${instant(run.startedAt)}</td></tr><tr><th>Ended</th><td>${instant(run.endedAt)}</td></tr>
<tr><th>Records</th><td>${run.records}</td></tr><tr><th>Attributes</th><td class="mono">${attributes(run)}</td></tr>
</tbody></table>`;
  const context = { page: "run" as const, run: run.id, ...(token !== undefined ? { token, aside: actionForms(run) } : {}) };
  if (journal === undefined) {
    return layout(run.id, html`${facts}<h2>Journal</h2><p class="error">${journalError ?? "the journal could not be read"}</p>`, context);
  }
  const counts = new Map<string, number>();
  for (const r of journal.records) counts.set(r.kind, (counts.get(r.kind) ?? 0) + 1);
  const byKind = html`<p>${[...counts].map(([kind, n], i) => html`${i > 0 ? ", " : ""}<code>${kind}</code> ${n}`)}</p>`;
  const rows = journal.records.map(
    (r, position) =>
      html`<tr class="record" data-kind="${r.kind}"><td>${position}</td><td>${instant(r.at)}</td><td><code>${r.kind}</code></td><td class="mono">${recordFields(r)}</td><td><pre>${clip(payloadText(r), 2000)}</pre></td></tr>`,
  );
  return layout(
    run.id,
    html`${facts}<h2>Timeline</h2>${timeline(journal.records)}<h2>Journal</h2>${byKind}<table class="journal"><thead><tr><th>#</th><th>At</th><th>Kind</th><th>Fields</th><th>Payload</th></tr></thead>
<tbody>${rows}</tbody></table>`,
    context,
  );
}

/** The forms of the actions on a run; the page's script posts them with the token. */
function actionForms(run: DataDirRun): Html {
  const path = (action: string): string => `/api/runs/${encodeURIComponent(run.id)}/${action}`;
  const form = (action: string, fields: Html, button: string, confirmText?: string): Html =>
    html`<form method="post" data-action="${action}" action="${path(action)}"${raw(confirmText === undefined ? "" : ` data-confirm="${escapeHtml(confirmText)}"`)}>${fields}<button type="submit">${button}</button><output></output></form>`;
  return html`<aside class="actions"><strong>Actions</strong><br>
${form("signal", html`<input name="name" placeholder="signal name" required> <input name="value" placeholder="value (JSON or text)"> `, "Send signal")}
${form("reset", html`<input name="step" placeholder="step name" required> `, "Reset to step", `Reset ${run.id} to this step? Its later steps run again.`)}
${form("cancel", html`<input name="reason" placeholder="reason"> `, "Cancel", `Cancel ${run.id}?`)}
${form("terminate", html`<input name="reason" placeholder="reason"> `, "Terminate", `Terminate ${run.id}? It stops at once.`)}
</aside>`;
}

/** The schedules: spec, state and the next instants. */
export function schedulesPage(schedules: readonly ScheduleDescription[]): string {
  if (schedules.length === 0) return layout("Schedules", html`<p class="muted">no schedules</p>`, { page: "schedules" });
  const rows = schedules.map(
    (
      s,
    ) => html`<tr><td class="mono">${s.name}</td><td>${s.workflow}</td><td class="mono">${when(s)}</td><td>${s.overlap}</td><td>${s.paused ? "paused" : "active"}</td>
<td>${s.started}</td><td>${s.skipped}</td><td>${s.nextTimes.map((t, i) => html`${i > 0 ? raw("<br>") : ""}${instant(t)}`)}</td>
<td class="mono">${s.recentRuns.map((id, i) => html`${i > 0 ? raw("<br>") : ""}<a href="${runPath(id)}">${id}</a>`)}</td></tr>`,
  );
  return layout(
    "Schedules",
    html`<table><thead><tr><th>Name</th><th>Workflow</th><th>When</th><th>Overlap</th><th>State</th><th>Started</th><th>Skipped</th><th>Next</th><th>Recent runs</th></tr></thead>
<tbody>${rows}</tbody></table>`,
    { page: "schedules" },
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

/** The runs page's URL for the same filters, starting at `cursor` (the first page when undefined). */
function withCursor(query: RunQuery, cursor: string | undefined): string {
  const p = new URLSearchParams();
  if (query.q !== undefined) p.set("q", query.q);
  if (query.status !== undefined) p.set("status", query.status);
  if (query.type !== undefined) p.set("type", query.type);
  for (const [k, v] of Object.entries(query.attributes)) p.set(`attr.${k}`, typeof v === "string" ? v : JSON.stringify(v));
  if (query.from !== undefined) p.set("from", String(query.from));
  if (query.to !== undefined) p.set("to", String(query.to));
  p.set("limit", String(query.limit));
  if (cursor !== undefined) p.set("cursor", cursor);
  return `/?${p.toString()}`;
}

/** An instant as a datetime-local input shows it (local time, to the minute). */
function localInput(ms: number | undefined): string {
  if (ms === undefined) return "";
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/** A record's payload as the user's types; a start's holds its input and, for update-with-start, the update's argument. */
function payloadText(r: ExportedRecord): string {
  const p = r.payload;
  if (r.kind !== "start" || p === undefined) return showValue(p);
  const parts = ("plain" in p ? p.plain : p.tagged) as JsonValue;
  if (!Array.isArray(parts)) return showValue(p);
  const part = (v: JsonValue | undefined): ExportedValue => ("plain" in p ? { plain: v ?? null } : { tagged: v ?? null });
  return r.update === undefined ? showValue(part(parts[0])) : `${showValue(part(parts[0]))}\nupdate argument: ${showValue(part(parts[1]))}`;
}
