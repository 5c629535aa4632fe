import { randomUUID } from "node:crypto";
import { NotFoundError } from "../core/errors.js";
import type { RunOperations } from "./run-operations.js";
import type { RunDetail, RunStatus, UpdateOptions } from "./types.js";
import { UpdateHandle } from "./update-handle.js";

/**
 * A handle on the runs of one workflow ID. It follows the ID, so it always speaks to the ID's
 * current run.
 *
 * @example
 * const run = await engine.start(Pay, "pay-1", 700);
 * await run.signal("approve", true);
 * const receipt = await run.result();
 */
export class RunHandle<T = unknown> {
  /** @internal Handles come from `engine.start` and `engine.run`; `ops` are the engine's runs. */
  constructor(
    private readonly ops: RunOperations,
    /** The workflow ID. */
    readonly id: string,
    /** @internal Set for the run of a debounce window or batch, which starts later: `result()` waits for its start. */
    private readonly startsLater = false,
  ) {}

  /**
   * The run's result once it finishes; rejects with its error when it fails, is terminated or
   * cancelled, with `NotFoundError` when the ID has no run (it never started, or retention forgot it),
   * and at once with the reason when the run cannot go on (status `stopped`). On the handle of a
   * debounce window or a batch, it first waits for the run to start.
   */
  result(): Promise<T> {
    // Not an async function: a caller may hold one of these per run, thousands at a time.
    if (this.startsLater) return this.ops.awaitStarted(this.id).then(() => this.ops.awaitResult(this.id) as Promise<T>);
    try {
      return this.ops.awaitResult(this.id) as Promise<T>;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Where the run stands; `NotFoundError` when the ID has no run. */
  async status(): Promise<RunStatus> {
    return (await this.ops.status(this.id)) ?? this.missing();
  }

  /** The run's status and its journal. */
  async describe(): Promise<RunDetail> {
    return (await this.ops.describe(this.id)) ?? this.missing();
  }

  /** Resolves once the ID has a run (immediately for a started run). */
  started(): Promise<void> {
    return this.ops.awaitStarted(this.id);
  }

  /** Delivers a signal durably: to its `@Signal` handler, or to the mailbox of `ctx.waitFor(name)`. */
  signal(name: string, value?: unknown): Promise<void> {
    return this.ops.signal(this.id, name, value);
  }

  /** Calls a `@Query` method on the run's current state (replaying the run if it is parked). */
  query<R = unknown>(name: string, ...args: unknown[]): Promise<R> {
    return this.ops.query(this.id, name, args) as Promise<R>;
  }

  /** Calls an `@Update` handler and waits for its journaled result. */
  update<R = unknown>(name: string, arg?: unknown, options: UpdateOptions = {}): Promise<R> {
    // The ID is chosen here, so a call performed twice (by a cluster's next owner) applies once.
    return this.ops.update(this.id, name, arg, options.id ?? randomUUID()) as Promise<R>;
  }

  /**
   * Sends an update and resolves once it is accepted (its validator passed and it is journaled),
   * without waiting for its handler; `result()` on the handle waits for that. A validator's refusal
   * rejects here with `RejectedError`.
   *
   * @example
   * const pending = await run.startUpdate<number>("add", "apple", { id: "u-1" });
   * const price = await pending.result();
   */
  async startUpdate<R = unknown>(name: string, arg?: unknown, options: UpdateOptions = {}): Promise<UpdateHandle<R>> {
    const id = options.id ?? randomUUID();
    await this.ops.update(this.id, name, arg, id, "accepted");
    return new UpdateHandle<R>(this.ops, this.id, name, id);
  }

  /** Ends the run at once; waiters on its result get a `TerminatedError`. */
  terminate(reason = "terminated"): Promise<void> {
    return this.ops.terminate(this.id, reason);
  }

  /**
   * Asks the run to stop: the workflow gets a `CancelledError` at its current (or next) wait and may
   * run clean-up steps; it ends `cancelled` if the error leaves `run()`.
   */
  cancel(reason = "cancel requested"): Promise<void> {
    return this.ops.cancel(this.id, reason);
  }

  /**
   * Re-runs the run from its first step named `stepName`, as a new run of the same ID: earlier steps
   * are answered from the journal, the named step and later ones run again with new idempotency keys,
   * and signals received are delivered again. A `RejectedError` when the run has no such step.
   */
  reset(stepName: string): Promise<void> {
    return this.ops.reset(this.id, stepName);
  }

  private missing(): never {
    throw new NotFoundError(`no workflow run has the ID '${this.id}'`);
  }
}
