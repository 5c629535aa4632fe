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
}

/** Performs a context call on this process's runs; the answer is what the caller returns. */
export async function perform(runs: LocalRuns, call: string, args: readonly unknown[], request: RequestInfo): Promise<unknown> {
  if (!Object.hasOwn(ROUTES, call))
    throw new RejectedError(`a context request has the unknown call '${call}'`, { reason: "unknown-request" });
  const known = call as RunCall;
  // A call that names itself (an event, a trigger) is named by the request, so a next owner asked again finds it performed.
  if (ROUTES[known].changes !== true) return invoke(runs, known, namedArgs(known, args, request.id));
  const changing = known as ChangingCall;
  const target = targetRun(changing, args);
  if (request.suspect && target !== undefined && (await runs.performedRequest(target, request.id))) {
    return changing === "startChild" ? (await runs.status(target))?.runId : undefined;
  }
  // The records the call appends name the request, so a next owner finds it performed.
  return performChange(runs, changing, args, { request: request.id });
}
