import type { Clock, ClockTimer, ClockUser } from "../core/clock.js";
import { toMillis, type Duration } from "../core/duration.js";

interface Scheduled {
  readonly at: number;
  readonly order: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** Options of a {@link VirtualClock}. */
export interface VirtualClockOptions {
  /**
   * How long (real time) `advance` waits for step attempts whose code is running before it lets
   * time pass around them: a step awaiting real I/O finishes first, while one that hangs until its
   * timeout does not hold the clock up for good. Default `"250ms"`.
   */
  readonly runningStepGrace?: Duration;
}

// Macrotask turns to wait after a timer fires when no engine runs on the clock.
const SETTLE_TURNS = 8;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A clock that only moves when told to. `advance` fires every timer that falls due within the span,
 * in time order, and after each waits until every engine running on the clock is idle (records
 * durable and applied, workflow code settled, no step attempt running), so a test of a one-day
 * sleep takes milliseconds and always runs the same way. A timer set for a time already passed
 * fires on the next turn of the event loop, as a real timer would.
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
  private readonly users = new Set<ClockUser>();
  private readonly graceMs: number;
  private firing = false;

  constructor(start: number = Date.UTC(2030, 0, 1), options: VirtualClockOptions = {}) {
    this.time = start;
    this.graceMs = toMillis(options.runningStepGrace ?? "250ms", "runningStepGrace");
  }

  now(): number {
    return this.time;
  }

  schedule(ms: number, fn: () => void): ClockTimer {
    const s: Scheduled = { at: this.time + Math.max(0, ms), order: this.order++, fn, cancelled: false };
    this.pending.push(s);
    if (s.at <= this.time) this.fireSoon();
    return { cancel: () => void (s.cancelled = true) };
  }

  hasDue(): boolean {
    return this.pending.some((s) => !s.cancelled && s.at <= this.time);
  }

  attach(user: ClockUser): () => void {
    this.users.add(user);
    return () => void this.users.delete(user);
  }

  /** Timers not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.pending.filter((s) => !s.cancelled).length;
  }

  /** Moves time forward by `d`, firing due timers in order and letting the engines settle after each. */
  async advance(d: Duration): Promise<void> {
    const target = this.time + toMillis(d, "advance");
    await this.settle();
    for (;;) {
      const next = this.nextDue(target);
      if (next === undefined) break;
      this.time = Math.max(this.time, next.at);
      next.fn();
      // Timers due at the same instant fire next, in order, before the engines are waited for.
      this.fireSoon();
      await this.settle();
    }
    this.time = target;
    await this.settle();
  }

  /** Sets the time, firing everything due by then. */
  async advanceTo(ms: number): Promise<void> {
    await this.advance(Math.max(0, ms - this.time));
  }

  /** Fires, on the next turn, every timer due by now (one set for a time already passed). */
  private fireSoon(): void {
    if (this.firing) return;
    this.firing = true;
    setImmediate(() => {
      this.firing = false;
      for (let next = this.nextDue(this.time); next !== undefined; next = this.nextDue(this.time)) next.fn();
    });
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
    if (this.users.size === 0) {
      for (let i = 0; i < SETTLE_TURNS; i++) await turn();
      return;
    }
    await Promise.all([...this.users].map((user) => user.settle(this.graceMs)));
  }
}
