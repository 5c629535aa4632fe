import type { ExportedRecord } from "@fusee/runtime";
import { html, type Html } from "./html.js";
import { journalEvents, type JournalEvent } from "./journal-events.js";

/** One thing drawn on the timeline: a bar from `from` to `to`, or a mark when they are equal. */
interface Item {
  readonly lane: string;
  readonly kind: "step" | "attempt" | "timer" | "update" | "child" | "signal" | "run";
  readonly from: number;
  readonly to: number;
  readonly label: string;
  readonly failed?: boolean;
  /** Not over at the journal's end: drawn as a mark, or a faded bar up to when it is due. */
  readonly open?: boolean;
}

const LANE_HEIGHT = 22;
const LABEL_WIDTH = 170;
const PLOT_WIDTH = 760;
const AXIS_HEIGHT = 24;
const MAX_LANES = 200;

/**
 * A run's journal as an SVG timeline: a lane per step call (a bar per attempt, failed ones red),
 * per timer (from set to fired, or faded up to `now` while it runs), per update (from accepted to
 * answered) and per child (from started to finished), signals as marks on a lane of their own, the
 * start and finish on the run's lane; time runs left to right.
 */
export function timeline(records: readonly ExportedRecord[], now: number): Html {
  const items = journalEvents(records).flatMap((e) => itemsOf(e, now));
  if (items.length === 0) return html`<p class="muted">nothing to draw</p>`;
  const lanes = [...new Set(items.map((i) => i.lane))].slice(0, MAX_LANES);
  const t0 = Math.min(...items.map((i) => i.from));
  const t1 = Math.max(...items.map((i) => i.to), t0 + 1);
  const x = (t: number): number => LABEL_WIDTH + ((t - t0) / (t1 - t0)) * PLOT_WIDTH;
  const height = AXIS_HEIGHT + lanes.length * LANE_HEIGHT + 4;
  const width = LABEL_WIDTH + PLOT_WIDTH + 20;
  const rows = lanes.map((lane, i) => {
    const y = AXIS_HEIGHT + i * LANE_HEIGHT;
    const shapes = items.filter((it) => it.lane === lane).map((it) => shape(it, x, y));
    return html`<g class="lane" data-lane="${lane}"><text x="4" y="${y + 15}" class="lane-label">${clipLabel(lane)}</text>${shapes}</g>`;
  });
  return html`<svg class="timeline" role="img" aria-label="timeline of the run's journal" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">
${axis(t0, t1, x, height)}${rows}</svg>`;
}

/** What the timeline draws of an event: nothing for patches, attributes, cancellations and completions. */
function itemsOf(e: JournalEvent, now: number): Item[] {
  const base = { lane: e.lane, from: e.from, to: e.to, label: e.label, failed: e.failed };
  switch (e.kind) {
    case "run":
    case "signal":
      return [{ ...base, kind: e.kind, to: e.from }];
    case "step": {
      const attempts: Item[] = e.attempts.map((a) => ({
        lane: e.lane,
        kind: "attempt",
        from: a.from,
        to: a.to,
        label: `${e.name ?? "?"} attempt ${a.attempt} failed`,
        failed: true,
      }));
      if (e.open && e.attempts.length > 0) return attempts;
      return [...attempts, { ...base, kind: "step", from: e.finalFrom ?? e.from, open: e.open }];
    }
    case "timer":
      // A running timer's bar ends now: drawn to when it is due, a long sleep would squeeze the rest of the run.
      return [{ ...base, kind: "timer", to: e.open ? Math.max(e.from, Math.min(e.until ?? e.from, now)) : e.to, open: e.open }];
    case "update":
    case "child":
      return [{ ...base, kind: e.kind, to: e.open ? e.from : e.to, open: e.open }];
    default:
      return [];
  }
}

function shape(it: Item, x: (t: number) => number, y: number): Html {
  const title = html`<title>${it.label} (${time(it.from)}${it.to !== it.from ? ` → ${time(it.to)}, ${span(it.to - it.from)}` : ""})</title>`;
  const cls = `mark-${it.kind}${it.failed === true ? " failed" : ""}${it.open === true ? " open" : ""}`;
  if (it.to === it.from && (it.kind === "signal" || it.kind === "run" || it.kind === "child" || it.kind === "update")) {
    const cx = x(it.from);
    const cy = y + LANE_HEIGHT / 2;
    return html`<path class="${cls}" data-kind="${it.kind}" d="M${cx} ${cy - 6}L${cx + 6} ${cy}L${cx} ${cy + 6}L${cx - 6} ${cy}Z">${title}</path>`;
  }
  const left = x(it.from);
  const w = Math.max(2, x(it.to) - left);
  return html`<rect class="${cls}" data-kind="${it.kind}" x="${left.toFixed(1)}" y="${y + 4}" width="${w.toFixed(1)}" height="${LANE_HEIGHT - 8}" rx="3">${title}</rect>`;
}

function axis(t0: number, t1: number, x: (t: number) => number, height: number): Html {
  const ticks: Html[] = [];
  for (let i = 0; i <= 4; i++) {
    const t = t0 + ((t1 - t0) * i) / 4;
    const at = x(t);
    ticks.push(
      html`<line x1="${at}" y1="${AXIS_HEIGHT - 6}" x2="${at}" y2="${height}" class="tick"/><text x="${at}" y="12" class="tick-label" text-anchor="${i === 0 ? "start" : i === 4 ? "end" : "middle"}">+${span(t - t0)}</text>`,
    );
  }
  return html`<g class="axis">${ticks}</g>`;
}

function clipLabel(text: string): string {
  return text.length > 26 ? `${text.slice(0, 25)}…` : text;
}

function time(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").replace("Z", "");
}

/** A duration the way a person reads it: 850ms, 12.5s, 3m20s, 2h05m. Rounding carries into the next unit, so no part reads 60. */
export function span(ms: number): string {
  if (ms < 999.5) return `${Math.round(ms)}ms`;
  if (ms < 59_950) return `${(ms / 1_000).toFixed(ms < 9_995 ? 2 : 1)}s`;
  const seconds = Math.round(ms / 1_000);
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
  const minutes = Math.round(ms / 60_000);
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}
