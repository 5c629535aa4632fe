import type { RunStatus, StartOptions } from "../client/types.js";
import { AlreadyExistsError } from "../core/errors.js";

/** What schedules, debounce windows and batches need of the engine: starting and watching runs. */
export interface FlowRuns {
  /**
   * Starts a run for this process as the holder of shard `fence` (the schedule's or the key's): a
   * start forwarded to another process is performed only while this one still holds that shard.
   */
  start(type: string, id: string, input: unknown, options: StartOptions, fence: number): Promise<void>;
  awaitResult(id: string): Promise<unknown>;
  status(id: string): Promise<RunStatus | undefined>;
  terminate(id: string, reason: string): Promise<void>;
  cancel(id: string, reason: string): Promise<void>;
}

/** An ID that has ever had a run is never started again: not while it runs, nor after it finished. */
const ONCE = { idPolicy: { running: "fail", finished: "refuse" } } as const;

/** Starts the run, for the holder of shard `fence`, unless its ID already has one; tells which. */
export async function startOnce(runs: FlowRuns, type: string, id: string, input: unknown, fence: number): Promise<"started" | "exists"> {
  try {
    await runs.start(type, id, input, ONCE, fence);
    return "started";
  } catch (e) {
    if (e instanceof AlreadyExistsError) return "exists";
    throw e;
  }
}

/** Resolves once the run has finished (or is gone, or the engine shut down); never rejects. */
export function whenFinished(runs: FlowRuns, id: string): Promise<void> {
  return runs.awaitResult(id).then(
    () => undefined,
    () => undefined,
  );
}

/** Delay before retrying a start that failed (a workflow type not registered yet): 1 s doubling to 1 min. */
export function retryDelay(failures: number): number {
  return Math.min(60_000, 1000 * 2 ** Math.min(6, Math.max(0, failures - 1)));
}
