import type { RunOperations } from "./run-operations.js";

/**
 * An update that was accepted: it passed its validator and is in the run's journal, so it will be
 * applied even across a restart. `result()` waits for its handler's journaled outcome.
 *
 * @example
 * const pending = await run.startUpdate<number>("add", "apple");
 * console.log("accepted as", pending.id);
 * const price = await pending.result();
 */
export class UpdateHandle<R = unknown> {
  /** @internal Handles come from `run.startUpdate`. */
  constructor(
    private readonly ops: RunOperations,
    /** The workflow ID of the run the update went to. */
    readonly workflowId: string,
    private readonly name: string,
    /** The update's ID: a repeated call with it is answered from the journal. */
    readonly id: string,
  ) {}

  /** The handler's result once it returns; rejects with its error. */
  result(): Promise<R> {
    // Asking again under the same ID never applies the update twice: the run answers from its journal.
    return this.ops.update(this.workflowId, this.name, undefined, this.id) as Promise<R>;
  }
}
