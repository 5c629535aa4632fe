import type { Clock, ClockTimer } from "../core/clock.js";

/**
 * The durable timers of all runs, earliest first, behind one clock timer. Entries are never
 * removed early: a popped entry is checked against its run before it fires, so cancelling a timer
 * costs nothing here.
 */
export class TimerQueue {
  // A binary heap kept as three parallel arrays (due time, workflow ID, call number) rather than an
  // object per timer: every parked run has a timer here, and recovery adds them by the hundred
  // thousand.
  private readonly ats: number[] = [];
  private readonly ids: string[] = [];
  private readonly seqs: number[] = [];
  private armed: { at: number; timer: ClockTimer } | undefined;
  private held = false;

  constructor(
    private readonly clock: Clock,
    private readonly fire: (id: string, seq: number, at: number) => void,
  ) {}

  get size(): number {
    return this.ats.length;
  }

  add(at: number, id: string, seq: number): void {
    const { ats, ids, seqs } = this;
    let i = ats.length;
    ats.push(at);
    ids.push(id);
    seqs.push(seq);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (ats[parent]! <= at) break;
      this.move(parent, i);
      i = parent;
    }
    this.place(i, at, id, seq);
    this.arm();
  }

  /** Whether a timer is due that has not fired yet (its clock callback is about to run). */
  hasDue(): boolean {
    return !this.held && this.ats.length > 0 && this.ats[0]! <= this.clock.now();
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
    if (this.ats.length === 0 || this.held) return;
    const at = this.ats[0]!;
    if (this.armed !== undefined && this.armed.at <= at) return;
    this.armed?.timer.cancel();
    this.armed = { at, timer: this.clock.schedule(Math.max(0, at - this.clock.now()), () => this.run()) };
  }

  private run(): void {
    this.armed = undefined;
    const now = this.clock.now();
    while (this.ats.length > 0 && this.ats[0]! <= now) {
      const at = this.ats[0]!;
      const id = this.ids[0]!;
      const seq = this.seqs[0]!;
      this.removeTop();
      this.fire(id, seq, at);
    }
    this.arm();
  }

  private removeTop(): void {
    const { ats, ids, seqs } = this;
    const at = ats.pop()!;
    const id = ids.pop()!;
    const seq = seqs.pop()!;
    const n = ats.length;
    if (n === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = l < n && ats[l]! < at ? l : -1;
      if (r < n && ats[r]! < (m < 0 ? at : ats[m]!)) m = r;
      if (m < 0) break;
      this.move(m, i);
      i = m;
    }
    this.place(i, at, id, seq);
  }

  /** Copies the timer at heap slot `from` into slot `to`. */
  private move(from: number, to: number): void {
    this.ats[to] = this.ats[from]!;
    this.ids[to] = this.ids[from]!;
    this.seqs[to] = this.seqs[from]!;
  }

  private place(i: number, at: number, id: string, seq: number): void {
    this.ats[i] = at;
    this.ids[i] = id;
    this.seqs[i] = seq;
  }
}
