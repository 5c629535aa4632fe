import type { DataDirRun, ReplayWait } from "@fusee/runtime";
import { instant } from "../data-dir.js";
import { foldedError } from "./error-view.js";
import { html, runPath, type Html } from "./html.js";
import type { JournalEvent } from "./journal-events.js";
import type { RunView } from "./run-view.js";
import { statusBadge } from "./status-badge.js";
import { span } from "./timeline.js";
import { errorOf, showValue } from "./value-view.js";

/**
 * What an unfinished run waits on now. From the journal: steps between attempts (the attempt that
 * failed, why, and when the next is due), steps reporting heartbeats, timers not fired, updates not
 * answered, children not finished, a cancellation not acted on. From a replay through the given
 * code: the signals and conditions the code waits for, which timers are still armed, and the calls
 * past the journal's end (a step whose first attempt runs now). `undefined` for a finished run.
 */
export function pendingView(view: RunView): Html | undefined {
  if (view.run.endedAt !== undefined || view.journal === undefined) return undefined;
  const result = view.replay !== undefined && "result" in view.replay && view.replay.result.ok ? view.replay.result : undefined;
  const open = view.events.filter((e) => e.open);
  const items: Html[] = [];
  for (const e of open) {
    if (e.kind === "step") items.push(stepItem(e, view.now));
    else if (e.kind === "update")
      items.push(
        html`<li data-wait="update">update <code>${e.name}</code> (ID <code>${e.updateId}</code>) accepted ${instant(e.from)}, its handler has not answered</li>`,
      );
    else if (e.kind === "child" && e.childId !== undefined) items.push(childItem(e.childId, e, view.runs));
    else if (e.kind === "timer" && result === undefined)
      items.push(timerItem(e.seq, e.until, view.now, "a sleep, or the timeout of a wait that may have ended"));
  }
  if (result !== undefined) {
    const stepCalls = new Set(open.filter((e) => e.kind === "step").map((e) => `(call #${String(e.seq)})`));
    for (const w of result.waiting) items.push(waitItem(w, view.now));
    for (const call of result.next) {
      if ([...stepCalls].some((c) => call.endsWith(c))) continue;
      items.push(
        html`<li data-wait="next">${call}: the code's next call, not in the journal yet${call.startsWith("step ") ? " (its first attempt runs now, or is about to)" : ""}</li>`,
      );
    }
  }
  const cancel = view.events.find((e) => e.kind === "cancel");
  if (cancel !== undefined)
    items.push(html`<li data-wait="cancel">cancellation requested ${instant(cancel.from)}: ${showValue(cancel.payload)}</li>`);
  const list =
    items.length === 0
      ? html`<p class="muted">nothing in the journal is open: the run is working, or waits for a signal or condition</p>`
      : html`<ul class="pending">${items}</ul>`;
  return html`${list}${codeNote(view)}`;
}

function stepItem(e: JournalEvent, now: number): Html {
  const last = e.attempts.at(-1);
  const progress = e.progress !== undefined ? html`; progress <code>${showValue(e.progress, 0)}</code>` : "";
  const beats =
    e.heartbeats !== undefined
      ? html`; ${e.heartbeats} heartbeat${e.heartbeats === 1 ? "" : "s"}, the last ${instant(e.to)}${progress}`
      : "";
  if (last === undefined) return html`<li data-wait="step">step <code>${e.name}</code> (call #${e.seq}) running${beats}</li>`;
  const error = errorOf(last.error);
  return html`<li data-wait="step">step <code>${e.name}</code> (call #${e.seq}): attempt <strong>${last.attempt}</strong> failed ${instant(last.to)}; attempt ${last.attempt + 1} due <time class="retry-at">${instant(last.retryAt)}</time> (${relative(last.retryAt, now)})${beats}${
    error !== undefined ? foldedError(error) : ""
  }</li>`;
}

function childItem(childId: string, e: JournalEvent, runs: readonly DataDirRun[]): Html {
  const child = runs.find((r) => r.id === childId);
  return html`<li data-wait="child">child <a href="${runPath(childId)}">${childId}</a> ${child !== undefined ? statusBadge(child.status) : html`<span class="muted">(not in this directory)</span>`}, started ${instant(e.from)}</li>`;
}

function timerItem(seq: number | undefined, until: number | undefined, now: number, what: string): Html {
  return html`<li data-wait="timer">timer (call #${seq}) due ${instant(until)} (${relative(until ?? now, now)}): ${what}</li>`;
}

function waitItem(w: ReplayWait, now: number): Html {
  const until = w.kind !== "timer" && w.until !== undefined ? html`, gives up ${instant(w.until)} (${relative(w.until, now)})` : "";
  if (w.kind === "signal") return html`<li data-wait="signal">signal <code>${w.name}</code>${until}</li>`;
  if (w.kind === "condition")
    return html`<li data-wait="condition">condition <code>${w.predicate}</code>, checked after each signal handler${until}</li>`;
  return timerItem(w.seq, w.until, now, "a sleep");
}

function codeNote(view: RunView): Html {
  if (!view.codeGiven) {
    return html`<p class="muted">Which signals and conditions the code waits for shows when fusee ui is given the workflows: <code>--workflows MODULE</code>.</p>`;
  }
  if (view.replay === undefined) return html``;
  const why = "error" in view.replay ? view.replay.error : view.replay.result.ok ? undefined : view.replay.result.error;
  return why === undefined ? html`` : html`<p class="error">The workflows given cannot replay this run: ${why}</p>`;
}

/** `in 3.20s` or `4m05s ago`, from `now`. */
function relative(at: number, now: number): string {
  return at >= now ? `in ${span(at - now)}` : `${span(now - at)} ago`;
}
