import type { ExportedRecord } from "@fusee/runtime";
import { clip, instant } from "../data-dir.js";
import { html, runPath, type Html } from "./html.js";
import type { JournalEvent } from "./journal-events.js";
import { span } from "./timeline.js";
import { errorOf, showRecordPayload, showValue } from "./value-view.js";
import { foldedError } from "./error-view.js";

/**
 * The compact view of a run's journal: one row per event (a step with its attempts, a timer set
 * and fired, an update and its answer, a child started and finished), with what it took and what
 * it gave; the full journal lists every record.
 */
export function eventList(events: readonly JournalEvent[], records: readonly ExportedRecord[]): Html {
  if (events.length === 0) return html`<p class="muted">no events</p>`;
  const rows = events.map((e) => {
    const first = e.positions[0] ?? 0;
    const last = e.positions.at(-1) ?? first;
    const took = e.to > e.from ? span(e.to - e.from) : "";
    return html`<tr class="event${e.open ? " open" : ""}" data-kind="${e.kind}"><td>${first === last ? first : `${first}–${last}`}</td><td>${instant(e.from)}</td><td><code>${e.kind}</code> ${subject(e)}</td><td class="took">${took}</td><td>${detail(e, records[first])}</td></tr>`;
  });
  return html`<table class="events"><thead><tr><th>#</th><th>At</th><th>Event</th><th>Took</th><th>Detail</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

/** The event's label without its kind, which the row shows already; a child's ID links to its page. */
function subject(e: JournalEvent): Html {
  const label = e.label.startsWith(`${e.kind} `) ? e.label.slice(e.kind.length + 1) : e.label;
  if (e.kind === "child" && e.childId !== undefined && label.startsWith(e.childId)) {
    return html`<a href="${runPath(e.childId)}">${e.childId}</a>${label.slice(e.childId.length)}`;
  }
  return html`${label}`;
}

function detail(e: JournalEvent, firstRecord: ExportedRecord | undefined): Html {
  if (e.kind === "run" && e.label.startsWith("started") && firstRecord !== undefined) return pre(showRecordPayload(firstRecord));
  if (e.kind === "update") return pre(e.open ? showValue(e.input) : `${showValue(e.input)} → ${showValue(e.payload)}`);
  if (e.kind === "timer") return html`${e.open ? "due " : "was due "}${instant(e.until)}`;
  if (e.kind === "step" && e.open) {
    const last = e.attempts.at(-1);
    const error = errorOf(last?.error);
    const progress = e.progress !== undefined ? pre(`progress: ${showValue(e.progress)}`) : "";
    if (last === undefined) return html`${e.heartbeats ?? 0} heartbeats${progress}`;
    return html`next attempt ${instant(last.retryAt)}${error !== undefined ? foldedError(error) : ""}${progress}`;
  }
  const error = errorOf(e.payload);
  if (error !== undefined) return foldedError(error);
  return pre(showValue(e.payload));
}

function pre(text: string): Html {
  return text === "" ? html`` : html`<pre>${clip(text, 2000)}</pre>`;
}
