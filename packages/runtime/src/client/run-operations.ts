import type { RunDetail, RunStatus, UpdateStage } from "./types.js";

/**
 * What a {@link RunHandle} asks of the runs behind it (the engine's run service). Arguments are
 * plain values, resolved by the handle, so a call can be performed by another process as it is.
 */
export interface RunOperations {
  awaitResult(id: string): Promise<unknown>;
  awaitStarted(id: string): Promise<void>;
  /** `undefined` when the ID has no run. */
  status(id: string): Promise<RunStatus | undefined>;
  /** `undefined` when the ID has no run. */
  describe(id: string): Promise<RunDetail | undefined>;
  signal(id: string, name: string, value: unknown): Promise<void>;
  query(id: string, name: string, args: readonly unknown[]): Promise<unknown>;
  /**
   * `updateId` deduplicates: the run applies an update of one ID once. With `stage` `"accepted"` it
   * resolves (with `undefined`) once the update passed its validator and is journaled.
   */
  update(id: string, name: string, arg: unknown, updateId: string, stage?: UpdateStage): Promise<unknown>;
  terminate(id: string, reason: string): Promise<void>;
  cancel(id: string, reason: string): Promise<void>;
  reset(id: string, stepName: string): Promise<void>;
}
