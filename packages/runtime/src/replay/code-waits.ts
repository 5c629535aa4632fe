import type { JournalRecord } from "../journal/records.js";
import { RunExecutor } from "../workflow/run-executor.js";

/**
 * Something the workflow code waits for where its journal ends, as a replay finds it: a signal
 * (`ctx.waitFor`), a condition (`ctx.condition`, woken by `@Signal` handlers) or a durable timer
 * (`ctx.sleep`). A wait with a timeout gives up at `until`; its timer is not listed again.
 */
export type ReplayWait =
  | { readonly kind: "signal"; readonly name: string; readonly until?: number }
  | { readonly kind: "condition"; readonly predicate: string; readonly until?: number }
  | { readonly kind: "timer"; readonly seq: number; readonly until: number };

type CodeWait = Extract<ReplayWait, { kind: "signal" | "condition" }>;

/**
 * A run executor that notes the waits of the code while it replays, so the replay can say which
 * are still open at the journal's end. The promises the code awaits are the executor's own, untouched:
 * noting a wait adds no turn to the code's path, so handlers apply at the same points.
 */
export class WaitNotingExecutor extends RunExecutor {
  private readonly open = new Set<CodeWait>();

  override waitFor(name: string, timeoutMs: number | undefined): Promise<unknown> {
    return this.note({ kind: "signal", name, ...this.deadline(timeoutMs) }, super.waitFor(name, timeoutMs));
  }

  override condition(pred: () => boolean, timeoutMs: number | undefined): Promise<boolean> {
    return this.note({ kind: "condition", predicate: pred.toString(), ...this.deadline(timeoutMs) }, super.condition(pred, timeoutMs));
  }

  /**
   * The waits still open: the code's signals and conditions, then the timers of `records` that are
   * armed and no wait's timeout, in call order. Nothing once the run finished.
   */
  waits(records: readonly JournalRecord[]): ReplayWait[] {
    if (this.finished !== undefined) return [];
    const code = [...this.open];
    const timeouts = new Set(code.map((w) => w.until));
    const fired = new Set(records.filter((r) => r.kind === "fired").map((r) => r.seq));
    const timers: ReplayWait[] = [];
    for (const r of records) {
      if (r.kind === "timer" && !fired.has(r.seq) && this.pending.has(r.seq) && !timeouts.has(r.until)) {
        timers.push({ kind: "timer", seq: r.seq, until: r.until });
      }
    }
    return [...code, ...timers];
  }

  private deadline(timeoutMs: number | undefined): { until?: number } {
    return timeoutMs === undefined ? {} : { until: this.now() + timeoutMs };
  }

  private note<T>(wait: CodeWait, promise: Promise<T>): Promise<T> {
    this.open.add(wait);
    const done = (): void => void this.open.delete(wait);
    promise.then(done, done);
    return promise;
  }
}
