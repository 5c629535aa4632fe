import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { JournalRecord } from "../journal/records.js";
import type { ChildOptions } from "./ctx-options.js";
import type { AttemptObserver, PermitRequest } from "./step-runner.js";
import type { Message } from "./messages.js";
import type { StepOptions } from "./step-options.js";

/** What an executor needs from the engine that hosts its run. */
export interface RunHost {
  readonly workflowId: string;
  readonly runId: number;
  readonly clock: Clock;
  /** Where `ctx.log` writes: the engine's logger, or the console when it has none. */
  readonly logger?: Logger | undefined;
  /**
   * Appends a record to the run's journal; once durable it comes back through `deliver`. Throws
   * synchronously when the record cannot be encoded or is too large.
   */
  append(record: JournalRecord): void;
  /**
   * How many records the run's journal holds, durable or not: the position the next one takes.
   * Absent where nothing is appended besides what the executor itself records.
   */
  appended?(): number;
  /** The timer set by call `seq` is no longer needed. */
  cancelTimer(seq: number): void;
  /** True once the engine shut down: results can no longer be recorded. */
  closed(): boolean;
  /** The executor's state changed (idle, finished, broken): the engine may update its index. */
  changed(): void;
  /**
   * A permit of the step's limit (`StepOptions.limit`), awaited before each attempt of the step and
   * released when the attempt ends, so a step backing off between retries holds none; `undefined`
   * when the step names no limit.
   */
  acquire?(options: StepOptions): PermitRequest | undefined;
  /** Starts a child run for call `seq`; the engine journals a `child` record with the outcome. */
  startChild(request: ChildRequest): void;
  /**
   * Ends this run and starts a fresh one of the same ID with `input`, carrying the run's search
   * attributes over unless `attributes` replaces them.
   */
  continueAsNew(input: unknown, attributes: Readonly<Record<string, unknown>> | undefined): void;
  /** Applies a close policy to a child whose wait timed out. */
  closeChild(childId: string, reason: string): void;
  /**
   * Delivers a message to the run of `target`, wherever it is held; the target applies `request`
   * once. Resolves with an update's result, else `undefined`.
   */
  deliver(target: string, message: Message, request: string): Promise<unknown>;
  /**
   * When present, steps never run: a step the journal does not answer is reported here and stays
   * pending. A replay check sets it, because checking code against a journal must have no effects.
   */
  skipStep?(seq: number, name: string): void;
  /** Watches one attempt of a step that really runs (never a replayed one), for traces and metrics. */
  observeAttempt?(name: string, attempt: number): AttemptObserver | undefined;
}

/** What `ctx.startChild` asks the engine to start. */
export interface ChildRequest {
  readonly seq: number;
  readonly type: string;
  readonly id: string;
  readonly input: unknown;
  readonly close: NonNullable<ChildOptions["close"]>;
}
