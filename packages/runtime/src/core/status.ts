/**
 * Every status a run can have, in the order a run meets them. `suspended`: waiting, held in memory;
 * `parked`: waiting, evicted from memory and replayed from its journal when something wakes it;
 * `stopped`: unfinished but unable to go on (its code no longer matches its journal, its workflow
 * type is not registered, a key its journal was sealed with is missing) until that is mended.
 */
export const RUN_STATUSES = ["running", "suspended", "parked", "stopped", "ok", "failed", "cancelled", "terminated"] as const;

/** Where a run stands: one of {@link RUN_STATUSES}. */
export type RunStatusValue = (typeof RUN_STATUSES)[number];

/** The statuses a run never leaves. */
export type FinishedStatus = "ok" | "failed" | "cancelled" | "terminated";

export function isFinished(status: RunStatusValue): status is FinishedStatus {
  return status === "ok" || status === "failed" || status === "cancelled" || status === "terminated";
}

/** Whether `value` names a run status. */
export function isRunStatus(value: unknown): value is RunStatusValue {
  return (RUN_STATUSES as readonly unknown[]).includes(value);
}
