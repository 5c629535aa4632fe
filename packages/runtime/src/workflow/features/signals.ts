import type { SignalRecord } from "../../journal/records.js";
import { asError, type Interrupts, type RecordAppliers, type RunCursor, type TimerCalls } from "./run-cursor.js";

interface Waiter {
  readonly resolve: (value: unknown) => void;
  timerSeq?: number;
}

/**
 * Signals: a `signal` record goes to the workflow's `@Signal` handler of its name when there is one,
 * else to the oldest `ctx.waitFor` of its name, else into a mailbox the next `waitFor` takes from.
 */
export class Signals {
  private readonly mailbox = new Map<string, { readonly value: unknown; readonly at: number }[]>();
  private readonly waiters = new Map<string, Waiter[]>();

  constructor(private readonly run: RunCursor & { readonly cancellation: Interrupts; readonly timers: TimerCalls }) {}

  waitFor(name: string, timeoutMs: number | undefined): Promise<unknown> {
    const buffered = this.mailbox.get(name);
    if (buffered !== undefined && buffered.length > 0) return Promise.resolve(buffered.shift()?.value);
    const run = this.run;
    return run.cancellation.interruptible((resolve, onCancel) => {
      const waiter: Waiter = { resolve };
      const list = this.waiters.get(name) ?? [];
      list.push(waiter);
      this.waiters.set(name, list);
      const remove = (): void => {
        const l = this.waiters.get(name);
        const i = l?.indexOf(waiter) ?? -1;
        if (i >= 0) l?.splice(i, 1);
      };
      if (timeoutMs !== undefined) {
        waiter.timerSeq = run.timers.set(run.now() + timeoutMs, () => {
          remove();
          resolve(undefined);
        });
      }
      onCancel(() => {
        remove();
        run.timers.cancel(waiter.timerSeq);
      });
    });
  }

  apply(name: string, value: unknown, at: number): void {
    const run = this.run;
    const method = run.definition.signals.get(name);
    if (method !== undefined && run.instance) {
      try {
        const r = (run.instance[method] as (v: unknown) => unknown)(value);
        if (r instanceof Promise) r.catch((e: unknown) => run.codeFailed(asError(e)));
      } catch (e) {
        run.codeFailed(asError(e));
      }
      return;
    }
    const first = this.waiters.get(name)?.shift();
    if (first !== undefined) {
      run.timers.cancel(first.timerSeq);
      first.resolve(value);
      return;
    }
    const box = this.mailbox.get(name) ?? [];
    box.push({ value, at });
    this.mailbox.set(name, box);
  }

  /** Signals in the mailbox that no `waitFor` took: a run continuing as new hands them to the next. */
  untaken(): SignalRecord[] {
    const out: SignalRecord[] = [];
    for (const [name, box] of this.mailbox) for (const { value, at } of box) out.push({ kind: "signal", name, value, at });
    return out;
  }
}

export const signalRecords: RecordAppliers<"signal", { readonly signals: Signals }> = {
  signal: (run, record) => run.signals.apply(record.name, record.value, record.at),
};
