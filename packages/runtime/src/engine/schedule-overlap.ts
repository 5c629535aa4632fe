/*
 * What a schedule's overlap policy does to the runs it started that may still be running: read
 * their statuses to forget those that ended, and end those still going before a newer run starts.
 */
import { NotFoundError, RejectedError, ShutDownError } from "../core/errors.js";
import { isFinished } from "../core/status.js";
import type { Overlap } from "../journal/schedule-state.js";
import type { FlowRuns } from "./flow-runs.js";

/** Forgets the runs of `active` that finished or no longer exist. */
export async function pruneEnded(runs: FlowRuns, active: Set<string>): Promise<void> {
  for (const id of [...active]) if (await hasEnded(runs, id)) active.delete(id);
}

/** Whether the run finished or no longer exists, by its status. */
export async function hasEnded(runs: FlowRuns, id: string): Promise<boolean> {
  const s = await runs.status(id);
  return s === undefined || isFinished(s.status);
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

/**
 * What the overlap policy makes of an instant: with no run of `active` still going, or under a
 * policy that lets a run start beside them or ends them first, `"start"`; otherwise the outcome its
 * tick records. Ends the running runs when the policy says so, unless the schedule's work here
 * stopped meanwhile (`open` false): its shard's next holder decides then.
 */
export async function overlapDecision(
  runs: FlowRuns,
  active: Set<string>,
  schedule: string,
  settings: { readonly overlap: Overlap; readonly buffered: boolean },
  open: () => boolean,
): Promise<"start" | "skipped" | "buffered"> {
  await pruneEnded(runs, active);
  if (active.size === 0 || !open()) return "start";
  switch (settings.overlap) {
    case "skip":
      return "skipped";
    case "buffer-one":
      return settings.buffered ? "skipped" : "buffered";
    case "cancel-other":
    case "terminate-other":
      await endRunning(runs, active, schedule, settings.overlap);
      return "start";
    case "allow-all":
      return "start";
  }
}
