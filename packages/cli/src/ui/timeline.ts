import type { ExportedRecord } from "@fusee/runtime";
import { html, type Html } from "./html.js";

/** One thing drawn on the timeline: a bar from `from` to `to`, or a mark when they are equal. */
interface Item {
  readonly lane: string;
  readonly kind: "step" | "attempt" | "timer" | "update" | "child" | "signal" | "run";
  readonly from: number;
  readonly to: number;
  readonly label: string;
  readonly failed?: boolean;
  /** An update accepted and not answered yet. */
  readonly pending?: boolean;
}

const LANE_HEIGHT = 22;
const LABEL_WIDTH = 170;
const PLOT_WIDTH = 760;
const AXIS_HEIGHT = 24;
const MAX_LANES = 200;

/**
 * A run's journal as an SVG timeline: a lane per step call (a bar per attempt, failed ones red),
 * per timer (from set to fired), per update (from accepted to answered) and per child, signals as
 * marks on a lane of their own, the start and finish on the run's lane; time runs left to right.
 * A step's first attempt is taken to start at the record before it, the moment the code called it.
 */
export function timeline(records: readonly ExportedRecord[]): Html {
  const items = itemsOf(records);
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

function shape(it: Item, x: (t: number) => number, y: number): Html {
  const title = html`<title>${it.label} (${time(it.from)}${it.to !== it.from ? ` → ${time(it.to)}, ${span(it.to - it.from)}` : ""})</title>`;
  const cls = `mark-${it.kind}${it.failed === true ? " failed" : ""}`;
  if (
    it.to === it.from &&
    (it.kind === "signal" || it.kind === "run" || it.kind === "child" || (it.kind === "update" && it.pending === true))
  ) {
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

function itemsOf(records: readonly ExportedRecord[]): Item[] {
  const items: Item[] = [];
  const timers = new Map<number, ExportedRecord>();
  /** Each update's record and the index of its item, replaced once it is answered. */
  const updates = new Map<string, { record: ExportedRecord; index: number }>();
  const attemptsOf = new Map<number, number>();
  let previousAt = records[0]?.at ?? 0;
  /** When the next attempt of call `seq` began: the back-off's end after a failed attempt. */
  const nextStart = new Map<number, number>();
  for (const r of records) {
    const seq = typeof r.seq === "number" ? r.seq : -1;
    switch (r.kind) {
      case "start":
        items.push({ lane: "run", kind: "run", from: r.at, to: r.at, label: "started" });
        break;
      case "finish":
        items.push({ lane: "run", kind: "run", from: r.at, to: r.at, label: `finished ${String(r.status)}`, failed: r.status !== "ok" });
        break;
      case "attempt": {
        const n = (attemptsOf.get(seq) ?? 0) + 1;
        attemptsOf.set(seq, n);
        items.push({
          lane: `step ${String(r.name)} #${seq}`,
          kind: "attempt",
          from: nextStart.get(seq) ?? previousAt,
          to: r.at,
          label: `${String(r.name)} attempt ${n} failed`,
          failed: true,
        });
        nextStart.set(seq, typeof r.retryAt === "number" ? r.retryAt : r.at);
        break;
      }
      case "step": {
        const n = typeof r.attempts === "number" ? r.attempts : 1;
        items.push({
          lane: `step ${String(r.name)} #${seq}`,
          kind: "step",
          from: Math.min(nextStart.get(seq) ?? previousAt, r.at),
          to: r.at,
          label: `${String(r.name)} ${r.ok === false ? "failed" : "ok"}${n > 1 ? ` after ${n} attempts` : ""}`,
          failed: r.ok === false,
        });
        break;
      }
      case "timer":
        timers.set(seq, r);
        items.push({
          lane: `timer #${seq}`,
          kind: "timer",
          from: r.at,
          to: typeof r.until === "number" ? Math.max(r.at, r.until) : r.at,
          label: "timer set",
        });
        break;
      case "fired": {
        const set = timers.get(seq);
        items.push({ lane: `timer #${seq}`, kind: "timer", from: set?.at ?? r.at, to: r.at, label: "timer fired" });
        break;
      }
      case "signal":
        items.push({ lane: "signals", kind: "signal", from: r.at, to: r.at, label: `signal ${String(r.name)}` });
        break;
      case "update":
        updates.set(String(r.id), { record: r, index: items.length });
        items.push({
          lane: `update ${String(r.name)}`,
          kind: "update",
          from: r.at,
          to: r.at,
          label: `update ${String(r.name)} accepted`,
          pending: true,
        });
        break;
      case "update-result": {
        const u = updates.get(String(r.id));
        if (u !== undefined) {
          const name = String(u.record.name);
          items[u.index] = {
            lane: `update ${name}`,
            kind: "update",
            from: u.record.at,
            to: r.at,
            label: `update ${name} ${r.ok === false ? "failed" : "answered"}`,
            failed: r.ok === false,
          };
        }
        break;
      }
      case "child":
      case "child-result":
        items.push({
          lane: `child ${String(r.childId)}`,
          kind: "child",
          from: r.at,
          to: r.at,
          label: r.kind === "child" ? `child ${String(r.childId)} started` : `child ${String(r.childId)} ${String(r.status)}`,
          failed: r.kind === "child-result" && r.status !== "ok",
        });
        break;
      default:
        break;
    }
    previousAt = r.at;
  }
  return items;
}

function clipLabel(text: string): string {
  return text.length > 26 ? `${text.slice(0, 25)}…` : text;
}

function time(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").replace("Z", "");
}

/** A duration the way a person reads it: 850ms, 12.5s, 3m20s, 2h05m. */
export function span(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)}s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)}m${String(Math.round((ms % 60_000) / 1_000)).padStart(2, "0")}s`;
  return `${Math.floor(ms / 3_600_000)}h${String(Math.round((ms % 3_600_000) / 60_000)).padStart(2, "0")}m`;
}
