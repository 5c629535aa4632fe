import { TimeoutError } from "../../core/errors.js";
import type { ChildResultRecord } from "../../journal/records.js";
import type { ChildHandle, ChildOptions } from "../ctx-options.js";
import type { Interrupts, RecordAppliers, RunCursor, TimerCalls } from "./run-cursor.js";

type Answer = ChildResultRecord | Error;

/**
 * Child runs: `ctx.startChild` is a call the engine answers with a `child` record once the child
 * started; the child's end comes back as `child-result`, or the wait times out first.
 */
export class Children {
  private readonly results = new Map<number, ChildResultRecord>();
  private readonly waiters = new Map<number, Array<(r: Answer) => void>>();
  /** The timer call guarding the wait for each child started with a timeout. */
  private readonly timeouts = new Map<number, number>();

  constructor(private readonly run: RunCursor & { readonly cancellation: Interrupts; readonly timers: TimerCalls }) {}

  start(type: string, id: string, input: unknown, options: ChildOptions): Promise<ChildHandle<unknown>> {
    const run = this.run;
    const seq = run.call("child", id);
    const close = options.close ?? "terminate";
    const timeoutMs = options.timeoutMs;
    if (timeoutMs !== undefined) {
      this.timeouts.set(
        seq,
        run.timers.set(run.now() + timeoutMs, () => this.timedOut(seq, id, timeoutMs)),
      );
    }
    return new Promise((resolve, reject) => {
      run.pending.set(seq, { resolve: () => resolve(this.handle(seq, id)), reject });
      if (!run.recorded(seq)) run.whenLive(() => run.host.startChild({ seq, type, id, input, close }));
    });
  }

  /** Whether the result of the child started by call `seq` was journaled in this run. */
  has(seq: number): boolean {
    return this.results.has(seq);
  }

  applyResult(record: ChildResultRecord): void {
    if (this.results.has(record.seq)) return;
    this.run.timers.cancel(this.timeouts.get(record.seq));
    this.timeouts.delete(record.seq);
    this.settle(record.seq, record, record);
  }

  private settle(seq: number, result: ChildResultRecord, answer: Answer): void {
    this.results.set(seq, result);
    for (const w of this.waiters.get(seq) ?? []) w(answer);
    this.waiters.delete(seq);
  }

  private handle(seq: number, id: string): ChildHandle<unknown> {
    const outcome = (r: Answer): unknown => {
      if (r instanceof Error) throw r;
      if (r.status === "ok") return r.value;
      throw r.error;
    };
    return {
      id,
      // Waiting for a child is a wait like any other: a cancellation of this run interrupts it.
      result: () => {
        const done = this.results.get(seq);
        if (done !== undefined) return new Promise((resolve) => resolve(outcome(done)));
        return this.run.cancellation
          .interruptible<Answer>((resolve, onCancel) => {
            const list = this.waiters.get(seq) ?? [];
            list.push(resolve);
            this.waiters.set(seq, list);
            onCancel(() => {
              const waiting = this.waiters.get(seq);
              const i = waiting?.indexOf(resolve) ?? -1;
              if (i >= 0) waiting?.splice(i, 1);
            });
          })
          .then(outcome);
      },
    };
  }

  private timedOut(seq: number, id: string, ms: number): void {
    const run = this.run;
    this.timeouts.delete(seq);
    if (this.results.has(seq)) return;
    const error = new TimeoutError(`child '${id}' of ${run.workflowId} did not finish within ${ms}ms`);
    this.settle(seq, { kind: "child-result", seq, childId: id, status: "failed", error, at: run.now() }, error);
    // The child is closed by its policy even when the timeout applies in a replay: a parked parent is
    // woken by replaying its journal, `fired` record included, and a crash may have come between that
    // record and the close. Closing twice is harmless: the engine forgets a child link once it closed it.
    run.whenLive(() => {
      if (!run.host.closed()) run.host.closeChild(id, `timed out after ${ms}ms`);
    });
  }
}

export const childRecords: RecordAppliers<"child" | "child-result", RunCursor & { readonly children: Children }> = {
  child: (run, record) => {
    const p = run.pending.take(record.seq);
    if (record.ok) p?.resolve(undefined);
    else p?.reject(record.error);
  },
  "child-result": (run, record) => run.children.applyResult(record),
};
