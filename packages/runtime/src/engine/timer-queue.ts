import type { Clock, ClockTimer } from "../core/clock.js";

const INITIAL = 64;

/**
 * The durable timers of all runs, earliest first, behind one clock timer. Entries are never
 * removed early: a popped entry is checked against its run before it fires, so cancelling a timer
 * costs nothing here.
 */
export class TimerQueue<Run = string> {
  // A binary heap kept as parallel arrays (due time, run, run number, call number) rather than an
  // object per timer: every parked run has a timer here, and recovery adds them by the hundred
  // thousand. The due time is kept here only, not in the run's index entry; the run number tells
  // a timer of the current run of an ID from one an earlier run left queued.
  private ats = new Float64Array(INITIAL);
  private readonly runs: Run[] = [];
  /** The run number's low 32 bits: enough to tell the runs of one ID apart, in half the space. */
  private runIds = new Int32Array(INITIAL);
  private seqs = new Int32Array(INITIAL);
  private armed: { at: number; timer: ClockTimer } | undefined;
  private held = false;

  constructor(
    private readonly clock: Clock,
    /** `runId`: the low 32 bits of the run number given to `add` (`runId | 0`). */
    private readonly fire: (run: Run, seq: number, at: number, runId: number) => void,
  ) {}

  get size(): number {
    return this.runs.length;
  }

  /** Queues the timer of call `seq` of `run` (its `runId`th run, when it has several), due at `at`. */
  add(at: number, run: Run, seq: number, runId = 0): void {
    let i = this.runs.length;
    if (i === this.ats.length) this.grow();
    this.runs.push(run);
    const ats = this.ats;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (ats[parent]! <= at) break;
      this.move(parent, i);
      i = parent;
    }
    this.place(i, at, run, runId, seq);
    this.arm();
  }

  /** Whether a timer is due that has not fired yet (its clock callback is about to run). */
  hasDue(): boolean {
    return !this.held && this.runs.length > 0 && this.ats[0]! <= this.clock.now();
  }

  /** Defers arming while many timers are added at once (recovery), so the clock is set once. */
  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.arm();
  }

  /** Calls `fn` with every queued timer, in no order, those no longer pending included (see the class). */
  forEach(fn: (at: number, run: Run, seq: number, runId: number) => void): void {
    for (let i = 0; i < this.runs.length; i++) fn(this.ats[i]!, this.runs[i]!, this.seqs[i]!, this.runIds[i]!);
  }

  stop(): void {
    this.armed?.timer.cancel();
    this.armed = undefined;
  }

  private arm(): void {
    if (this.runs.length === 0 || this.held) return;
    const at = this.ats[0]!;
    if (this.armed !== undefined && this.armed.at <= at) return;
    this.armed?.timer.cancel();
    this.armed = { at, timer: this.clock.schedule(Math.max(0, at - this.clock.now()), () => this.fireDue()) };
  }

  private fireDue(): void {
    this.armed = undefined;
    const now = this.clock.now();
    while (this.runs.length > 0 && this.ats[0]! <= now) {
      const at = this.ats[0]!;
      const run = this.runs[0]!;
      const runId = this.runIds[0]!;
      const seq = this.seqs[0]!;
      this.removeTop();
      this.fire(run, seq, at, runId);
    }
    this.arm();
  }

  private removeTop(): void {
    const { ats, runs } = this;
    const n = runs.length - 1;
    const at = ats[n]!;
    const runId = this.runIds[n]!;
    const seq = this.seqs[n]!;
    const run = runs.pop()!;
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
    this.place(i, at, run, runId, seq);
  }

  /** Copies the timer at heap slot `from` into slot `to`. */
  private move(from: number, to: number): void {
    this.ats[to] = this.ats[from]!;
    this.runs[to] = this.runs[from]!;
    this.runIds[to] = this.runIds[from]!;
    this.seqs[to] = this.seqs[from]!;
  }

  private place(i: number, at: number, run: Run, runId: number, seq: number): void {
    this.ats[i] = at;
    this.runs[i] = run;
    this.runIds[i] = runId;
    this.seqs[i] = seq;
  }

  private grow(): void {
    const n = this.ats.length + (this.ats.length >> 1);
    this.ats = grown(this.ats, new Float64Array(n));
    this.runIds = grown(this.runIds, new Int32Array(n));
    this.seqs = grown(this.seqs, new Int32Array(n));
  }
}

function grown<T extends Float64Array | Int32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
