import type { NonDeterminismError, CancelledError } from "../../core/errors.js";
import type { CallRecord, JournalRecord, RecordKind, RecordOf } from "../../journal/records.js";
import type { FinishedStatus } from "../../core/status.js";
import type { WorkflowDefinition } from "../registry.js";
import type { RunHost } from "../run-host.js";
import type { StepOptions } from "../step-options.js";

/** A numbered call of the workflow code waiting for the record that answers it. */
export interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Set for a step call: a cancellation reaches the calls of steps that have not answered. */
  readonly step?: true;
}

/**
 * What every feature module of a run sees of its executor: the replay cursor's services (call
 * numbering, the journal being replayed, recording). A feature that needs another asks for it by
 * one of the narrow views below, so no feature module imports another's and each gets only what it
 * uses.
 */
export interface RunCursor {
  readonly definition: WorkflowDefinition;
  readonly workflowId: string;
  readonly host: RunHost;
  /** The workflow instance, once the start record applied. */
  readonly instance: Record<string, unknown> | undefined;
  readonly broken: Error | undefined;
  readonly finished: FinishedStatus | undefined;
  /** Calls waiting for their answer, by call number. */
  readonly pending: {
    set(seq: number, p: Pending): void;
    take(seq: number): Pending | undefined;
    forEach(fn: (p: Pending, seq: number) => void): void;
  };
  /** True while a replay holds back what the code asks to do (see {@link whenLive}). */
  readonly replaying: boolean;
  /** Workflow time: the time of the record applied last. */
  now(): number;
  /** Numbers a call of the code and checks it against the journal; `args` is a step call's argument fingerprint. */
  call(kind: CallRecord["kind"], name: string | undefined, args?: string): number;
  /** True when the journal being replayed answers call `seq`. */
  recorded(seq: number): boolean;
  /** The journal's record for the code's next call, while replaying. */
  nextRecorded(): CallRecord | undefined;
  /** Counts the code's next call as answered by the journal without numbering it anew. */
  skipCall(): void;
  /** True while records of the journal loaded for replay are still being applied. */
  inReplay(): boolean;
  /** Runs `action` now, or once the replay is done when one is under way. */
  whenLive(action: () => void): void;
  /**
   * Runs `action` once the code has reacted to every record appended to the journal so far (at once
   * when it has): a record appended then follows them, and must say what the code made of them.
   */
  whenCaughtUp(action: () => void): void;
  /** Appends `record` unless the run can no longer record anything. */
  record(record: JournalRecord): void;
  /** Appends the failure that replaces an unjournalable outcome, or breaks the run when even that fails. */
  recordOrBreak(record: JournalRecord): void;
  /** The workflow code failed outside its body (a handler, a condition): the run fails. */
  codeFailed(error: Error): void;
  /** Stops the run: its code and journal disagree, or it cannot go on. */
  breakWith(error: Error): void;
  /** The error for a journal whose `record` at `position` the code did not ask for; `asking` follows the code's last call. */
  mismatch(position: number, record: JournalRecord, asking: string): NonDeterminismError;
  step(name: string, fn: () => unknown, options: StepOptions): Promise<unknown>;
}

export type { RecordOf } from "../../journal/records.js";

/** Waits of the workflow code that a cancellation interrupts (the run's `Cancellation`). */
export interface Interrupts {
  /** A wait that a cancellation rejects with `CancelledError` (at once, when one is pending). */
  interruptible<T>(body: (resolve: (v: T) => void, onCancel: (undo: () => void) => void) => void): Promise<T>;
}

/** Durable timers set as calls of the code (the run's `Timers`). */
export interface TimerCalls {
  /** Sets a timer due at `until`; `onFire` runs when it fires. Returns the timer's call number. */
  set(until: number, onFire: () => void): number;
  /** The timer of call `seq` is no longer needed. */
  cancel(seq: number | undefined): void;
}

/** What a run's cancellation means to its step calls (the run's `Cancellation`). */
export interface CancelledSteps {
  /** The cancellation not yet told to the code, taken so that it is told once. */
  take(): CancelledError | undefined;
  /** The cancellation that stops step call `seq` before an attempt starts. */
  stopsStep(seq: number): CancelledError | undefined;
  /** True when the failure of step call `seq` is the run's cancellation. */
  claimsFailure(seq: number): boolean;
}

/** The step calls a run executes (the run's `Steps`), which its end or cancellation aborts. */
export interface StepAborts {
  abort(reason: Error): void;
}

/** What names a run in its steps' idempotency keys (the run's `Lifecycle`). */
export interface KeyNaming {
  readonly keyPrefix: string;
}

/**
 * How a feature applies the records it owns, one function per kind: `replayed` is true for records
 * of the journal loaded for replay, false for records that just became durable.
 */
export type RecordAppliers<K extends RecordKind, R = RunCursor> = {
  readonly [P in K]: (run: R, record: RecordOf<P>, replayed: boolean, position: number) => void;
};

export function asError(e: unknown): Error {
  if (e instanceof Error) return e;
  return new Error(typeof e === "string" ? e : `non-error thrown: ${safeString(e)}`);
}

function safeString(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
