import type { DataDirRun } from "@fusee/runtime";
import { instant } from "../data-dir.js";
import { attributesText } from "./attributes-text.js";
import { errorView } from "./error-view.js";
import { eventList } from "./event-list.js";
import { html, layout, runPath, type Html, type PageEnv } from "./html.js";
import { journalTable } from "./journal-table.js";
import { pendingView } from "./pending-view.js";
import { runActions } from "./action-forms.js";
import { runFamily } from "./run-family.js";
import type { RunView } from "./run-view.js";
import { schedulePosition } from "./schedule-position.js";
import { statusCell } from "./status-badge.js";
import { timeline } from "./timeline.js";
import { errorOf } from "./value-view.js";

/**
 * One run: its facts, the error that ended it, what it waits on, its parent and children, its place
 * in its schedule, a timeline, the compact events and the full journal; with actions allowed, the
 * forms that act on it.
 */
export function runPage(view: RunView, env: PageEnv): string {
  const { run } = view;
  const family = runFamily(run, view.runs);
  const sections: Html[] = [facts(run, view)];
  const failure = failureSection(view);
  if (failure !== undefined) sections.push(failure);
  const pending = pendingView(view);
  if (pending !== undefined) sections.push(html`<section id="waiting"><h2>Waiting on</h2>${pending}</section>`);
  if (family !== undefined) sections.push(html`<section id="family"><h2>Parent and children</h2>${family.tree}</section>`);
  const position = schedulePosition(run, view.runs, view.schedule);
  if (position !== undefined) sections.push(html`<section id="schedule"><h2>In its schedule</h2>${position}</section>`);
  if (view.journal === undefined) {
    sections.push(html`<h2>Journal</h2><p class="error">${view.journalError ?? "the journal could not be read"}</p>`);
  } else {
    const records = view.journal.records;
    sections.push(html`<section id="timeline"><h2>Timeline</h2>${timeline(records, view.now)}</section>
<section id="events"><h2>Events</h2><p class="muted">One row per step, timer, update, child or signal; <a href="#journal">the journal</a> below lists every record.</p>${eventList(view.events, records)}</section>
<section id="journal"><h2>Journal</h2>${journalTable(records)}</section>`);
  }
  const watch = family?.ids ?? [run.id];
  const aside = runActions(run, view, env.actions);
  return layout(run.id, html`<div class="watch" data-watch="${JSON.stringify(watch)}"></div>${sections}`, env, {
    page: "run",
    run: run.id,
    ...(aside !== undefined ? { aside } : {}),
  });
}

function facts(run: DataDirRun, view: RunView): Html {
  const children = view.runs.filter((r) => r.parent?.id === run.id).length;
  return html`<table class="facts"><tbody>
<tr><th>Type</th><td>${run.type}</td></tr><tr><th>Run</th><td>${run.runId}</td></tr><tr><th>Status</th>${statusCell(run.status)}</tr>
<tr><th>Started</th><td>${instant(run.startedAt)}</td></tr><tr><th>Ended</th><td>${instant(run.endedAt)}</td></tr>
<tr><th>Records</th><td>${run.records}</td></tr><tr><th>Attributes</th><td class="mono">${attributesText(run)}</td></tr>
${run.parent !== undefined ? html`<tr><th>Parent</th><td><a class="parent" href="${runPath(run.parent.id)}">${run.parent.id}</a> (run ${run.parent.runId})</td></tr>` : ""}
${children > 0 ? html`<tr><th>Children</th><td><a href="#family">${children}</a></td></tr>` : ""}
${run.schedule !== undefined ? html`<tr><th>Schedule</th><td><a href="#schedule">${run.schedule.name}</a>, for ${instant(run.schedule.instant)}</td></tr>` : ""}
</tbody></table>`;
}

/** The error that ended the run, with its stack, or why it cannot go on; `undefined` when neither applies. */
function failureSection(view: RunView): Html | undefined {
  const reason = view.run.error;
  const finish = [...view.events].reverse().find((e) => e.kind === "run" && e.label.startsWith("finished"));
  const error = finish?.failed === true ? errorOf(finish.payload) : undefined;
  if (reason === undefined && error === undefined) return undefined;
  const title =
    view.run.status === "failed"
      ? "Error"
      : view.run.status === "terminated"
        ? "Terminated"
        : view.run.status === "cancelled"
          ? "Cancelled"
          : "Why it stopped";
  return html`<section id="error" class="error-box"><h2>${title}</h2>${reason !== undefined ? html`<p class="error">${reason}</p>` : ""}${error !== undefined ? errorView(error) : ""}</section>`;
}
