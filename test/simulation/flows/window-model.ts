import type { WindowKey } from "./flow-plan.js";

export type Family = "batch" | "debounce";

/** An event sent with `engine.batch` or `engine.debounce`, and what came of the call. */
export interface SentEvent {
  readonly family: Family;
  readonly key: WindowKey;
  readonly ev: number;
  readonly at: number;
  /** The run ID the call answered with; undefined while in doubt (the engine died first). */
  readonly runId: string | undefined;
  /** The model says its event ID was taken already (the call changed nothing), or undefined when it does not know. */
  readonly retry: boolean | undefined;
}

interface ModelWindow {
  readonly n: number;
  readonly firstAt: number;
  lastAt: number;
  readonly evs: number[];
}

/** The rule of a family, as the plan gave it. */
export interface WindowRule {
  /** When the window closes by time. */
  deadline(firstAt: number, lastAt: number): number;
  /** Events that close the window at once (Infinity for debounce). */
  readonly size: number;
}

/**
 * The reference model of one key's windows: which window an event joins and the run ID the call
 * must answer with, computed from the rule and the event times. A fault that may have lost an
 * event makes the key unknown until its windows surely fired.
 */
export class WindowModel {
  private readonly windows: ModelWindow[] = [];
  /** The largest window number used, or an upper bound of it when `exact` is false. */
  private lastN = 0;
  private exact = true;
  /** Until then the model does not know the key's windows (a fault may have dropped events). */
  private unknownUntil = -Infinity;

  constructor(
    readonly family: Family,
    readonly key: WindowKey,
    private readonly rule: WindowRule,
  ) {}

  runId(n: number): string {
    return this.family === "batch" ? `${this.key}#${n}` : `${this.key}@${n}`;
  }

  /** Event IDs sent in doubt: whether the engine took them, and in which window, the model cannot tell. */
  private readonly doubtful = new Set<number>();

  /** Whether the latest `send` found its event ID taken already. */
  retried = false;

  /** The run ID an event sent at `now` must be answered with, or undefined when the model does not know. */
  send(ev: number, now: number): string | undefined {
    this.retried = false;
    if (now <= this.unknownUntil || this.doubtful.has(ev)) {
      this.blurUntil(now);
      return undefined;
    }
    const again = this.windows.find((w) => w.evs.includes(ev) && this.keeps(w, now));
    if (again !== undefined) {
      this.retried = true;
      return this.runId(again.n);
    }
    let w = this.open(now);
    if (w === undefined) {
      if (!this.exact && now <= this.lastN) {
        this.blurUntil(now);
        return undefined;
      }
      this.exact = true;
      w = { n: Math.max(now, this.lastN + 1), firstAt: now, lastAt: now, evs: [] };
      this.lastN = w.n;
      this.windows.push(w);
    }
    w.evs.push(ev);
    w.lastAt = now;
    return this.runId(w.n);
  }

  /** The engine may have lost or kept an event in doubt, or events the fault cut off: the key is unknown for a while. */
  blurUntil(now: number, ev?: number): void {
    if (ev !== undefined) this.doubtful.add(ev);
    // A window an event at `now` opened or joined has fired by a new window's deadline.
    this.unknownUntil = Math.max(this.unknownUntil, this.rule.deadline(now, now));
    // Each event in doubt may have opened a window, numbered at most one past the last or its time.
    this.lastN = Math.max(this.lastN + 1, now);
    this.exact = false;
    this.windows.length = 0;
  }

  /** The key's open window at `now`: not full, its deadline not reached. */
  private open(now: number): ModelWindow | undefined {
    const w = this.windows[this.windows.length - 1];
    if (w === undefined || w.evs.length >= this.rule.size || this.rule.deadline(w.firstAt, w.lastAt) <= now) return undefined;
    return w;
  }

  /** The engine keeps the latest fired window (and any unfired one) to answer a retried event ID. */
  private keeps(w: ModelWindow, now: number): boolean {
    const fired = this.windows.filter((x) => x !== this.open(now));
    return this.open(now) === w || fired[fired.length - 1] === w;
  }
}
