/*
 * How the owner of a shard performs a call another process of the cluster context to it: on its
 * own runs, as the call's route in the routing table says.
 */
import { RejectedError } from "../../core/errors.js";
import type { LocalRuns } from "../local-runs.js";
import { type ChangingCall, invoke, namedArgs, perform as performChange, ROUTES, targetRun } from "../run-routes.js";
import type { RunCall } from "../run-service.js";

/** A context request as its performer sees it. */
export interface RequestInfo {
  readonly id: string;
  /**
   * Set when an earlier owner of the shard may have performed the request and died before
   * answering it: a call that changes a run is then looked for in the run's journal before it is
   * performed again. Updates carry their own IDs, which the run deduplicates.
   */
  readonly suspect: boolean;
  /** Where the request was asked on behalf of a shard its asker held: that lease, whether it still held when read, and the asker. */
  readonly fence?: { readonly shard: number; readonly epoch: number; readonly holds: boolean; readonly asker: string | null };
}

/** Performs a context call on this process's runs; the answer is what the caller returns. */
export async function perform(runs: LocalRuns, call: string, args: readonly unknown[], request: RequestInfo): Promise<unknown> {
  if (!Object.hasOwn(ROUTES, call))
    throw new RejectedError(`a context request has the unknown call '${call}'`, { reason: "unknown-request" });
  const known = call as RunCall;
  if (ROUTES[known].changes !== true) {
    refuseUnfenced(known, request);
    // A call that names itself (an event, a trigger) is named by the request, so a next owner asked again finds it performed.
    return invoke(runs, known, namedArgs(known, args, request.id));
  }
  const changing = known as ChangingCall;
  const target = targetRun(changing, args);
  // One an earlier owner of the shard performed, while its fence held, is answered as performed.
  if (request.suspect && target !== undefined && (await runs.performedRequest(target, request.id))) {
    return changing === "startChild" ? (await runs.status(target))?.runId : undefined;
  }
  refuseUnfenced(changing, request);
  // The records the call appends name the request, so a next owner finds it performed.
  return performChange(runs, changing, args, { request: request.id });
}

/**
 * Refuses a request whose asker no longer held, when it was read, the lease it asked under: a
 * schedule's start asked by a holder stopped past its lease would otherwise land after the next
 * holder took the schedule over, beside a run that holder started.
 */
function refuseUnfenced(call: RunCall, { id, fence }: RequestInfo): void {
  if (fence === undefined || fence.holds) return;
  throw new RejectedError(
    `${call} request ${id} was asked by owner "${fence.asker ?? "unknown"}" on behalf of its lease on shard ${fence.shard} at epoch ${fence.epoch}, ` +
      "which it no longer held when this owner took the request up (the lease moved or ran out): it was not performed; " +
      `the holder of shard ${fence.shard} deals with what it asked for`,
    { reason: "lease-lost" },
  );
}
