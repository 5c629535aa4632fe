import type { PostgresLog } from "../storage/postgres/index.js";
import type { ClusterNode } from "./cluster/node.js";
import type { LocalRuns } from "./local-runs.js";
import { routedRuns, type RoutedRuns } from "./routed-runs.js";
import type { RunTelemetry } from "./run-telemetry.js";

/**
 * Joins the cluster of the processes sharing `log`: this process's runs recover the shards it takes
 * and forget those it loses, share their limits' permits with the other processes before any run
 * resumes, and send calls on other shards' runs to their owners from now on.
 */
export async function joinCluster(
  runs: LocalRuns,
  log: PostgresLog,
  telemetry: RunTelemetry | undefined,
  forwardTimeoutMs: number,
): Promise<{ cluster: ClusterNode; routed: RoutedRuns }> {
  // Loaded on demand: only cluster processes load the cluster's code.
  const { ClusterNode } = await import("./cluster/node.js");
  const host = {
    runs,
    recoverShards: async (shards: readonly number[]) => {
      const failed = await runs.recover(shards);
      runs.flows.open();
      runs.resumeAll();
      return failed;
    },
    forgetShard: (shard: number) => runs.forgetShard(shard),
    ...(telemetry === undefined ? {} : { trace: telemetry }),
  };
  const cluster = await ClusterNode.join(host, log, { forwardTimeoutMs }, (permits) => runs.flows.shareLimits(permits));
  const routed = routedRuns(runs, cluster, log.shardCount);
  runs.routeThrough(routed);
  return { cluster, routed };
}
