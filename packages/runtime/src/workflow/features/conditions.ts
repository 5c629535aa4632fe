import { asError, type Interrupts, type RunCursor, type TimerCalls } from "./run-cursor.js";

interface Condition {
  readonly pred: () => boolean;
  readonly resolve: (ok: boolean) => void;
  timerSeq?: number;
}

/** `ctx.condition`: predicates checked each time the code settled after a record; they journal nothing themselves. */
export class Conditions {
  private readonly waiting = new Set<Condition>();

  constructor(private readonly run: RunCursor & { readonly cancellation: Interrupts; readonly timers: TimerCalls }) {}

  wait(pred: () => boolean, timeoutMs: number | undefined): Promise<boolean> {
    if (pred()) return Promise.resolve(true);
    const run = this.run;
    return run.cancellation.interruptible<boolean>((resolve, onCancel) => {
      const c: Condition = { pred, resolve };
      this.waiting.add(c);
      if (timeoutMs !== undefined) {
        c.timerSeq = run.timers.set(run.now() + timeoutMs, () => {
          this.waiting.delete(c);
          resolve(false);
        });
      }
      onCancel(() => {
        this.waiting.delete(c);
        run.timers.cancel(c.timerSeq);
      });
    });
  }

  /** Resolves the conditions that hold; true when any did, so the code settles again before the next record. */
  check(): boolean {
    if (this.waiting.size === 0) return false;
    let any = false;
    for (const c of [...this.waiting]) {
      let holds: boolean;
      try {
        holds = c.pred();
      } catch (e) {
        this.waiting.delete(c);
        this.run.codeFailed(asError(e));
        continue;
      }
      if (holds) {
        this.waiting.delete(c);
        this.run.timers.cancel(c.timerSeq);
        c.resolve(true);
        any = true;
      }
    }
    return any;
  }
}
