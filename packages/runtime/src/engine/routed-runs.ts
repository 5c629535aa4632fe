import type { ListFilter, RunStatus } from "../client/types.js";
import { ShardMovedError } from "../core/errors.js";
import { shardOf } from "../core/ids.js";
import { parseCompletionToken } from "../workflow/completion-token.js";
import type { LocalRuns } from "./local-runs.js";
import { invoke, ROUTES, type Route } from "./run-routes.js";
import type { RunCall, RunRouter } from "./run-service.js";
import { newestFirst } from "./run-status.js";

/** How a process of a cluster reaches the others. */
export interface ClusterTransport {
  /** Whether this process holds the shard (and has recovered its runs). */
  owns(shard: number): boolean;
  /**
   * Has the process holding `shard` perform `call` and returns its answer, or throws its error;
   * with `fence`, only while this process still holds shard `fence` at the epoch it holds now.
   */
  forward(shard: number, call: RunCall, args: readonly unknown[], fence?: number): Promise<unknown>;
}

/** The runs of a cluster, as one process sees them: its own, and the others' through their owners. */
export interface RoutedRuns extends RunRouter {
  /** The runs of every shard that match the filter, newest first: this process's, and each other owner's. */
  listAll(filter: ListFilter, limit: number): Promise<RunStatus[]>;
}

/**
 * A run service that decides once per call where it is performed: here, when this process holds
 * the call's shard, else by the shard's owner. Its calls are derived from the routing table, so
 * nothing is kept by hand per call. A call that only waits (or is idempotent by an ID) and finds
 * its shard moved meanwhile is asked again of the next owner.
 */
export function routedRuns(local: LocalRuns, transport: ClusterTransport, shardCount: number): RoutedRuns {
  const shardFor = (route: Route, args: readonly unknown[]): number => {
    const arg = args[route.at];
    switch (route.by) {
      case "run":
        return shardOf(arg as string, shardCount);
      case "token":
        return shardOf(parseCompletionToken(arg as string).workflowId, shardCount);
      case "shard":
        return arg as number;
      case "flow":
        return local.flowShardOf(route.family, arg as string);
    }
  };
  const perform = async (call: RunCall, args: readonly unknown[], fence?: number): Promise<unknown> => {
    const { route, retriesOnMove } = ROUTES[call];
    for (;;) {
      const shard = shardFor(route, args);
      if (!transport.owns(shard)) return transport.forward(shard, call, args, fence);
      try {
        return await invoke(local, call, args);
      } catch (e) {
        if (!(retriesOnMove && e instanceof ShardMovedError)) throw e;
      }
    }
  };
  const service: Record<string, unknown> = {};
  for (const call of Object.keys(ROUTES) as RunCall[]) service[call] = (...args: unknown[]): Promise<unknown> => perform(call, args);
  const routed = service as unknown as RoutedRuns;
  // Only a start that waits for another process is fenced: one of a shard this process holds is
  // appended here at once, right after its asker found its lease on `fence` running.
  routed.startFenced = async (fence, ...args) => void (await perform("start", args, fence));
  routed.listAll = async (filter, limit) => {
    // Runs of a shard this process is letting go of, or still recovering, may be in its memory too:
    // the shard's owner answers for them, so they are listed once, as it tells.
    const out = local.listHeld(filter, limit, (shard) => transport.owns(shard));
    const others: Promise<RunStatus[]>[] = [];
    for (let shard = 0; shard < shardCount; shard++) if (!transport.owns(shard)) others.push(routed.listShard(shard, filter, limit));
    for (const list of await Promise.all(others)) out.push(...list);
    return newestFirst(out, limit);
  };
  return routed;
}
