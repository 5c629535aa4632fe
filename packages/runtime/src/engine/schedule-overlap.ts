/*
 * What a schedule's overlap policy does to the runs it started that may still be running: read
 * their statuses to forget those that ended, and end those still going before a newer run starts.
 */
import { NotFoundError, RejectedError, ShutDownError } from "../core/errors.js";
import type { FlowRuns } from "./flow-runs.js";

/** Forgets the runs of `active` that finished or no longer exist. */
export async function pruneEnded(runs: FlowRuns, active: Set<string>): Promise<void> {
  for (const id of [...active]) {
    const s = await runs.status(id);
    if (s === undefined || s.status === "ok" || s.status === "failed" || s.status === "cancelled" || s.status === "terminated")
      active.delete(id);
  }
}

/**
 * Ends the running runs of `active` before a new one starts: terminated at once (`terminate-other`),
 * or asked to cancel (`cancel-other`), in which case the new run starts without waiting for them to stop.
 */
export async function endRunning(
  runs: FlowRuns,
  active: Set<string>,
  schedule: string,
  overlap: "cancel-other" | "terminate-other",
): Promise<void> {
  const reason = `schedule '${schedule}' started a newer run (overlap ${overlap})`;
  for (const id of [...active]) {
    try {
      if (overlap === "cancel-other") await runs.cancel(id, reason);
      else await runs.terminate(id, reason);
    } catch (e) {
      // A run that ended (or cannot go on) meanwhile needs no ending; any other failure, a storage
      // error above all, may leave it running, and a new run beside it would break the policy.
      const ended = (e instanceof NotFoundError || e instanceof RejectedError) && !(e instanceof ShutDownError);
      if (!ended) throw e;
    }
    active.delete(id);
  }
}
