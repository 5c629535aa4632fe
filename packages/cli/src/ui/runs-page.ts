import type { DataDirRun } from "@fusee/runtime";
import { instant } from "../data-dir.js";
import { batchActions } from "./action-forms.js";
import { attributesText } from "./attributes-text.js";
import { html, layout, runPath, type PageEnv } from "./html.js";
import { filterText, pageUrl, RUN_STATUSES, type RunQuery } from "./run-query.js";
import { statusCell } from "./status-badge.js";

/** What the runs page shows: one page of runs, and how many of all the runs the filter matches have not finished. */
export interface RunsView {
  readonly runs: readonly DataDirRun[];
  readonly query: RunQuery;
  readonly dir: string;
  /** The cursor of the next page, if there is one. */
  readonly next: string | undefined;
  readonly unfinished: number;
}

/** The runs page: the filters, one page of runs (newest first), the link to the next page, and with actions the batch forms. */
export function runsPage(view: RunsView, env: PageEnv): string {
  const { query, runs, next } = view;
  const options = ["", ...RUN_STATUSES].map(
    (s) => html`<option value="${s}"${s === (query.status ?? "") ? html` selected` : ""}>${s === "" ? "any status" : s}</option>`,
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
<label>Per page <input name="limit" value="${query.limit}" size="4" class="narrow"></label>
<button type="submit">Filter</button></form>`;
  const rows = runs.map(
    (
      r,
    ) => html`<tr data-id="${r.id}"><td class="mono"><a href="${runPath(r.id)}">${r.id}</a></td><td>${r.type}</td><td>${r.runId}</td>${statusCell(r.status)}
<td>${instant(r.startedAt)}</td><td>${instant(r.endedAt)}</td><td>${r.records}</td><td class="mono">${attributesText(r)}</td></tr>`,
  );
  const table =
    runs.length === 0
      ? html`<p class="muted">no runs</p>`
      : html`<table class="runs"><thead><tr><th>ID</th><th>Type</th><th>Run</th><th>Status</th><th>Started</th><th>Ended</th><th>Records</th><th>Attributes</th></tr></thead>
<tbody>${rows}</tbody></table>`;
  const pager = html`<p class="pager">${query.cursor !== undefined ? html`<a href="${pageUrl(query, undefined)}">first page</a>` : ""}${
    next !== undefined ? html`<a class="next" href="${pageUrl(query, next)}">next page →</a>` : ""
  }</p>`;
  const aside = batchActions(filterText(query), env.actions);
  const n = view.unfinished;
  const count = html`<p class="muted match" data-unfinished="${n}">${n} unfinished run${n === 1 ? "" : "s"} match${n === 1 ? "es" : ""} this filter</p>`;
  return layout("Runs", html`<p class="muted">${view.dir}</p>${form}${count}${table}${pager}`, env, {
    page: "runs",
    ...(aside !== undefined ? { aside } : {}),
  });
}

/** An instant as a datetime-local input shows it (local time, to the minute). */
function localInput(ms: number | undefined): string {
  if (ms === undefined) return "";
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}
