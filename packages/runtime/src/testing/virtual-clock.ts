import type { Clock, ClockTimer } from "../core/clock.js";
import { toMillis, type Duration } from "../core/duration.js";

interface Scheduled {
  readonly at: number;
  readonly order: number;
  readonly fn: () => void;
  cancelled: boolean;
}

// Macrotask turns to wait after a timer fires, so the records it causes are appended and applied
// (and any timers they set are scheduled) before the clock moves on.
const SETTLE_TURNS = 8;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A clock that only moves when told to. `advance` fires every timer that falls due within the span,
 * in time order, letting the engine settle after each, so a test of a one-day sleep takes
 * milliseconds and always runs the same way.
 *
 * @example
 * const t = await TestEngine.create({ workflows: [Reminder] });
 * await t.start(Reminder, "r-1", "call mum");
 * await t.clock.advance("1d");
 */
export class VirtualClock implements Clock {
  private time: number;
  private order = 0;
  private readonly pending: Scheduled[] = [];

  constructor(start: number = Date.UTC(2030, 0, 1)) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  schedule(ms: number, fn: () => void): ClockTimer {
    const s: Scheduled = { at: this.time + Math.max(0, ms), order: this.order++, fn, cancelled: false };
    this.pending.push(s);
    return { cancel: () => void (s.cancelled = true) };
  }

  /** Timers not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.pending.filter((s) => !s.cancelled).length;
  }

  /** Moves time forward by `d`, firing due timers in order. */
  async advance(d: Duration): Promise<void> {
    const target = this.time + toMillis(d, "advance");
    await this.settle();
    for (;;) {
      const next = this.nextDue(target);
      if (next === undefined) break;
      this.time = Math.max(this.time, next.at);
      next.fn();
      await this.settle();
    }
    this.time = target;
    await this.settle();
  }

  /** Sets the time, firing everything due by then. */
  async advanceTo(ms: number): Promise<void> {
    await this.advance(Math.max(0, ms - this.time));
  }

  private nextDue(target: number): Scheduled | undefined {
    let best: Scheduled | undefined;
    let index = -1;
    this.pending.forEach((s, i) => {
      if (s.cancelled || s.at > target) return;
      if (best === undefined || s.at < best.at || (s.at === best.at && s.order < best.order)) {
        best = s;
        index = i;
      }
    });
    if (index >= 0) this.pending.splice(index, 1);
    for (let i = this.pending.length - 1; i >= 0; i--) if (this.pending[i]?.cancelled) this.pending.splice(i, 1);
    return best;
  }

  private async settle(): Promise<void> {
    for (let i = 0; i < SETTLE_TURNS; i++) await turn();
  }
}
