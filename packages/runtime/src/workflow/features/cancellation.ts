import { CancelledError } from "../../core/errors.js";
import type { RecordAppliers, RecordOf, RunCursor, StepAborts } from "./run-cursor.js";

/** A wait of the workflow code that a cancellation interrupts. */
type Interruptible = (error: CancelledError) => void;

/**
 * Cancellation of a run: the `cancel` record interrupts the code's current waits (or, when it waits
 * for nothing, the next wait, step call or the body's end) and aborts the steps it runs.
 */
export class Cancellation {
  private waits: Set<Interruptible> | undefined = undefined;
  /** A cancellation no code has been told of yet: the next wait, step call or the body's end gets it. */
  private untold: CancelledError | undefined = undefined;
  /** The record of the cancellation no code has been told of yet. */
  private untoldBy: RecordOf<"cancel"> | undefined = undefined;
  /** Step calls that had not answered when the run was cancelled: a failure of theirs is the cancellation. */
  private cancelledSteps: Set<number> | undefined = undefined;
  /** The cancellation that aborts steps the run executes after it (held during a replay). */
  private aborting: CancelledError | undefined = undefined;
  /** The code has been told of a cancellation: a wait or a step call of its got one. */
  told = false;

  constructor(private readonly run: RunCursor & { readonly steps: StepAborts }) {}

  /** The cancellation not yet told to the code, taken so that it is told once. */
  take(): CancelledError | undefined {
    const error = this.untold;
    this.untold = undefined;
    this.untoldBy = undefined;
    return error;
  }

  /** The cancellation no code was told of: a run continuing as new hands it to the next. */
  untaken(): RecordOf<"cancel"> | undefined {
    return this.untoldBy;
  }

  /** A wait that a cancellation rejects with `CancelledError` (at once, when one is pending). */
  interruptible<T>(body: (resolve: (v: T) => void, onCancel: (undo: () => void) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const cancelled = this.take();
      if (cancelled !== undefined) {
        this.told = true;
        reject(cancelled);
        return;
      }
      let undo: () => void = () => undefined;
      const interrupt: Interruptible = (error) => {
        this.waits?.delete(interrupt);
        undo();
        this.told = true;
        reject(error);
      };
      (this.waits ??= new Set()).add(interrupt);
      body(
        (v) => {
          this.waits?.delete(interrupt);
          resolve(v);
        },
        (u) => {
          undo = u;
        },
      );
    });
  }

  /** The cancellation that stops step call `seq` before an attempt starts: the run was cancelled while it was in flight. */
  stopsStep(seq: number): CancelledError | undefined {
    return this.aborting !== undefined && this.cancelledSteps?.has(seq) === true ? this.aborting : undefined;
  }

  /** True when the failure of step call `seq` is the run's cancellation (which the code is then told of). */
  claimsFailure(seq: number): boolean {
    if (this.cancelledSteps?.delete(seq) !== true) return false;
    this.told = true;
    this.untold = undefined;
    this.untoldBy = undefined;
    return true;
  }

  apply(record: RecordOf<"cancel">, replayed: boolean): void {
    const run = this.run;
    const error = new CancelledError(`run ${run.host.runId} of ${run.workflowId} was cancelled: ${record.reason}`);
    run.pending.forEach((p, seq) => {
      if (p.step === true) (this.cancelledSteps ??= new Set()).add(seq);
    });
    if ((this.waits?.size ?? 0) === 0) {
      this.untold = error;
      this.untoldBy = record;
    }
    for (const interrupt of [...(this.waits ?? [])]) interrupt(error);
    this.aborting = error;
    if (!replayed) run.steps.abort(error);
  }
}

export const cancellationRecords: RecordAppliers<"cancel", { readonly cancellation: Cancellation }> = {
  cancel: (run, record, replayed) => run.cancellation.apply(record, replayed),
};
