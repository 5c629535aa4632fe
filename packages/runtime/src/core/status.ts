/**
 * Where a run stands. `suspended`: waiting, held in memory; `parked`: waiting, evicted from memory
 * and replayed from its journal when something wakes it.
 */
export type RunStatusValue = "running" | "suspended" | "parked" | "ok" | "failed" | "cancelled" | "terminated";

/** The statuses a run never leaves. */
export type FinishedStatus = "ok" | "failed" | "cancelled" | "terminated";

export function isFinished(status: RunStatusValue): status is FinishedStatus {
  return status === "ok" || status === "failed" || status === "cancelled" || status === "terminated";
}
