import { TimeoutError } from "../../core/errors.js";
import type { CompletionRecord } from "../../journal/records.js";
import { makeCompletionToken } from "../completion-token.js";
import { scopeOf } from "../run-binding.js";
import type { StepOptions } from "../step-options.js";
import type { Interrupts, RecordAppliers, RunCursor, TimerCalls } from "./run-cursor.js";

/**
 * `ctx.awaitCompletion`: a step sends a token, and the run waits for the `completion` record that
 * `engine.complete` or `engine.fail` journals for it. A token is answered once.
 */
export class Completions {
  private readonly issued = new Set<string>();
  private readonly answered = new Map<string, CompletionRecord>();
  private readonly waiters = new Map<string, (r: CompletionRecord) => void>();

  constructor(private readonly run: RunCursor & { readonly cancellation: Interrupts; readonly timers: TimerCalls }) {}

  await(name: string, send: (c: { token: string }) => unknown, options: StepOptions, waitTimeoutMs: number | undefined): Promise<unknown> {
    const run = this.run;
    return (async () => {
      const token = (await run.step(
        name,
        async () => {
          const scope = scopeOf(run);
          const t = makeCompletionToken(run.workflowId, run.host.runId, scope?.key ?? name, scope?.attempt ?? 1);
          await send({ token: t });
          return t;
        },
        options,
      )) as string;
      this.issued.add(token);
      // The timer is set whether or not the answer is in already, so replay makes the same calls.
      let timerSeq: number | undefined;
      let timedOut: (() => void) | undefined;
      if (waitTimeoutMs !== undefined) {
        timerSeq = run.timers.set(run.now() + waitTimeoutMs, () => {
          timerSeq = undefined;
          timedOut?.();
        });
      }
      const done = this.answered.get(token);
      let record: CompletionRecord | undefined;
      try {
        record =
          done ??
          (await run.cancellation.interruptible<CompletionRecord | undefined>((resolve, onCancel) => {
            this.waiters.set(token, resolve);
            timedOut = () => {
              this.waiters.delete(token);
              // The run waits for it no more: a late answer is refused, not journaled and ignored.
              this.issued.delete(token);
              resolve(undefined);
            };
            onCancel(() => this.waiters.delete(token));
          }));
      } finally {
        run.timers.cancel(timerSeq);
      }
      if (record === undefined) {
        throw new TimeoutError(`ctx.awaitCompletion('${name}') of ${run.workflowId} had no answer to its token within ${waitTimeoutMs}ms`);
      }
      if (record.ok) return record.value;
      throw record.error;
    })();
  }

  /** Whether `token` may complete: `open` once issued and unanswered. */
  state(token: string): "open" | "used" | "unknown" {
    if (this.answered.has(token)) return "used";
    return this.issued.has(token) ? "open" : "unknown";
  }

  /** Reserves `token` before its completion is appended, so a concurrent second answer is refused. */
  claim(token: string): void {
    this.issued.delete(token);
    this.answered.set(token, { kind: "completion", token, ok: true, at: this.run.now() });
  }

  apply(record: CompletionRecord): void {
    this.answered.set(record.token, record);
    const waiter = this.waiters.get(record.token);
    this.waiters.delete(record.token);
    waiter?.(record);
  }
}

export const completionRecords: RecordAppliers<"completion", { readonly completions: Completions }> = {
  completion: (run, record) => run.completions.apply(record),
};
