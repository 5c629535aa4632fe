import type { Clock, ClockTimer } from "../core/clock.js";

interface Due {
  readonly at: number;
  readonly id: string;
  readonly seq: number;
}

/**
 * The durable timers of all runs, earliest first, behind one clock timer. Entries are never
 * removed early: a popped entry is checked against its run before it fires, so cancelling a timer
 * costs nothing here.
 */
export class TimerQueue {
  private readonly heap: Due[] = [];
  private armed: { at: number; timer: ClockTimer } | undefined;
  private held = false;

  constructor(
    private readonly clock: Clock,
    private readonly fire: (id: string, seq: number, at: number) => void,
  ) {}

  get size(): number {
    return this.heap.length;
  }

  add(at: number, id: string, seq: number): void {
    const h = this.heap;
    h.push({ at, id, seq });
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((h[parent] as Due).at <= at) break;
      [h[i], h[parent]] = [h[parent] as Due, h[i] as Due];
      i = parent;
    }
    this.arm();
  }

  /** Defers arming while many timers are added at once (recovery), so the clock is set once. */
  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.arm();
  }

  stop(): void {
    this.armed?.timer.cancel();
    this.armed = undefined;
  }

  private arm(): void {
    const first = this.heap[0];
    if (first === undefined || this.held) return;
    if (this.armed !== undefined && this.armed.at <= first.at) return;
    this.armed?.timer.cancel();
    const at = first.at;
    this.armed = { at, timer: this.clock.schedule(Math.max(0, at - this.clock.now()), () => this.run()) };
  }

  private run(): void {
    this.armed = undefined;
    const now = this.clock.now();
    while (this.heap.length > 0 && (this.heap[0] as Due).at <= now) {
      const due = this.pop();
      this.fire(due.id, due.seq, due.at);
    }
    this.arm();
  }

  private pop(): Due {
    const h = this.heap;
    const top = h[0] as Due;
    const last = h.pop() as Due;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && (h[l] as Due).at < (h[m] as Due).at) m = l;
        if (r < h.length && (h[r] as Due).at < (h[m] as Due).at) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m] as Due, h[i] as Due];
        i = m;
      }
    }
    return top;
  }
}
