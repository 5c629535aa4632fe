import type { RunStatusValue } from "@fusee/runtime";
import { html, type Html } from "./html.js";

type Tone = "good" | "live" | "quiet" | "bad";

// A status missing here (one a newer runtime adds) shows in the tone of runs that need a look.
const TONES: Partial<Record<RunStatusValue, Tone>> = {
  running: "live",
  suspended: "live",
  parked: "live",
  ok: "good",
  cancelled: "quiet",
  failed: "bad",
  terminated: "bad",
};

/** A run's status as a coloured badge; `status-<status>` names it for styles and tests. */
export function statusBadge(status: string): Html {
  const tone = TONES[status as RunStatusValue] ?? "bad";
  return html`<span class="badge tone-${tone} status-${status}">${status}</span>`;
}

/** A table cell holding {@link statusBadge}. */
export function statusCell(status: string): Html {
  return html`<td class="status">${statusBadge(status)}</td>`;
}
