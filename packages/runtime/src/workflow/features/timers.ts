import type { Interrupts, RecordAppliers, RunCursor } from "./run-cursor.js";

/** Durable timers: `sleep`, and the timeouts of waits and children. */
export class Timers {
  constructor(private readonly run: RunCursor & { readonly cancellation: Interrupts }) {}

  /** Sets a timer due at `until` as a call of the code; `onFire` runs when its `fired` record applies. */
  set(until: number, onFire: () => void): number {
    const run = this.run;
    const seq = run.call("timer", undefined);
    run.pending.set(seq, { resolve: onFire, reject: () => undefined });
    if (!run.recorded(seq)) {
      run.whenLive(() => run.record({ kind: "timer", seq, until, at: run.host.clock.now() }));
    }
    return seq;
  }

  /** The timer of call `seq` is no longer needed: it will not fire into the code. */
  cancel(seq: number | undefined): void {
    if (seq === undefined) return;
    this.run.pending.take(seq);
    this.run.host.cancelTimer(seq);
  }

  sleepUntil(until: number): Promise<void> {
    return this.run.cancellation.interruptible<void>((resolve, onCancel) => {
      const seq = this.set(until, () => resolve());
      onCancel(() => this.cancel(seq));
    });
  }
}

export const timerRecords: RecordAppliers<"timer" | "fired"> = {
  // The timer's call was numbered when the code set it; the engine arms it from the index.
  timer: () => undefined,
  fired: (run, record) => run.pending.take(record.seq)?.resolve(undefined),
};
