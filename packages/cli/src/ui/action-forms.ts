import type { DataDirRun } from "@fusee/runtime";
import { html, type ActionsState, type Html } from "./html.js";
import type { RunView } from "./run-view.js";

/**
 * The forms that act on one run (signal, reset, cancel, terminate), posted by the page's script with
 * the token; the note saying why there are none when this process cannot write the directory;
 * nothing when actions are off.
 */
export function runActions(run: DataDirRun, view: RunView, actions: ActionsState): Html | undefined {
  if (actions.kind === "off") return undefined;
  if (actions.kind === "unavailable") return unavailable(actions.reason);
  const path = (action: string): string => `/api/runs/${encodeURIComponent(run.id)}/${action}`;
  const signals = new Set(view.events.filter((e) => e.kind === "signal").map((e) => e.name ?? ""));
  if (view.replay !== undefined && "result" in view.replay) {
    for (const w of view.replay.result.waiting) if (w.kind === "signal") signals.add(w.name);
  }
  const steps = new Set(view.events.filter((e) => e.kind === "step").map((e) => e.name ?? ""));
  const finished = run.endedAt !== undefined;
  return html`<aside class="actions"><strong>Actions</strong><br>
${finished ? "" : form(path("signal"), "signal", html`<input name="name" placeholder="signal name" list="signal-names" required><datalist id="signal-names">${options(signals)}</datalist> <input name="value" placeholder="value (JSON or text)"> `, "Send signal")}
${form(path("reset"), "reset", html`<input name="step" placeholder="step name" list="step-names" required><datalist id="step-names">${options(steps)}</datalist> `, "Reset to step", `Reset ${run.id} to this step? Its later steps run again.`)}
${finished ? "" : form(path("cancel"), "cancel", html`<input name="reason" placeholder="reason"> `, "Cancel", `Cancel ${run.id}?`)}
${finished ? "" : form(path("terminate"), "terminate", html`<input name="reason" placeholder="reason"> `, "Terminate", `Terminate ${run.id}? It stops at once.`)}
</aside>`;
}

/**
 * The batch forms of the runs page: cancel or terminate every unfinished run the filter matches
 * (all pages of it), or the note saying why there are none. The confirmation names how many runs
 * the page counts when the button is pressed (its `{unfinished}`, filled in by the page's script).
 *
 * @param filter the runs page's query without its cursor and page size, sent back with the form.
 */
export function batchActions(filter: string, actions: ActionsState): Html | undefined {
  if (actions.kind === "off") return undefined;
  if (actions.kind === "unavailable") return unavailable(actions.reason);
  const fields = html`<input type="hidden" name="filter" value="${filter}"><input name="reason" placeholder="reason"> `;
  return html`<aside class="actions batch"><strong>Batch</strong> <span class="muted">every unfinished run this filter matches, on every page</span><br>
${form("/api/batch/cancel", "batch-cancel", fields, "Cancel all", "Cancel the {unfinished} unfinished runs that match this filter?")}
${form("/api/batch/terminate", "batch-terminate", fields, "Terminate all", "Terminate the {unfinished} unfinished runs that match this filter? They stop at once.")}
</aside>`;
}

function form(action: string, name: string, fields: Html, button: string, confirmText?: string): Html {
  return html`<form method="post" data-action="${name}" action="${action}"${confirmText === undefined ? "" : html` data-confirm="${confirmText}"`}>${fields}<button type="submit">${button}</button><output></output></form>`;
}

function options(names: ReadonlySet<string>): Html[] {
  return [...names].filter((n) => n !== "").map((n) => html`<option value="${n}">`);
}

function unavailable(reason: string): Html {
  return html`<aside class="actions unavailable" id="actions-unavailable"><strong>Actions unavailable.</strong> fusee ui was started with --allow-actions, but this process cannot write the data directory: ${reason}
<br>A data directory has one writer. Act through the engine that holds it (<code>run.signal</code>, <code>cancel</code>, <code>terminate</code>, <code>reset</code>), or stop it and start fusee ui --allow-actions again.</aside>`;
}
