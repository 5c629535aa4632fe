import type { RunDetail, RunStatus, UpdateOptions } from "./types.js";

/** What a {@link RunHandle} asks of the engine it came from. */
export interface RunOperations {
  awaitResult(id: string): Promise<unknown>;
  awaitStarted(id: string): Promise<void>;
  statusOf(id: string): Promise<RunStatus>;
  detailOf(id: string): Promise<RunDetail>;
  signal(id: string, name: string, value: unknown): Promise<void>;
  query(id: string, name: string, args: readonly unknown[]): Promise<unknown>;
  update(id: string, name: string, arg: unknown, options: UpdateOptions): Promise<unknown>;
  terminate(id: string, reason: string): Promise<void>;
  cancel(id: string, reason?: string): Promise<void>;
  reset(id: string, stepName: string): Promise<void>;
}
