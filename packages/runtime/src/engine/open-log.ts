import type { LocalLog } from "../storage/local-log.js";
import type { Log } from "../storage/log.js";
import { MemoryLog } from "../storage/memory-log.js";
import type { RecoveryVisitor } from "../storage/recovery-visitor.js";
import type { Settings } from "./config.js";
import type { EngineOptions } from "./engine-options.js";

/**
 * Opens the log the settings name. The file and PostgreSQL engines are loaded on demand, so an
 * application loads only the storage it uses (and PostgreSQL users alone load the driver). A local
 * log comes back prepared, not opened: recovery has only decided what to cut, which is written
 * once the engine's checks have passed (`LocalLog.completeOpen`). `visitor` is told what a local
 * log's recovery keeps, so the engine indexes its runs in the same read.
 */
export async function openLog(s: Settings, options: EngineOptions, visitor?: RecoveryVisitor): Promise<{ log: Log; local?: LocalLog }> {
  if (s.storage.kind === "memory") return { log: options.memoryLog ?? new MemoryLog(s.shards) };
  if (s.storage.kind === "postgres") {
    // One engine process runs every shard, so it claims them all, unless it shares them with a cluster.
    const { openPostgresLog } = await import("../storage/postgres/index.js");
    const { url, schema, leaseMs, owner, cluster } = s.storage;
    return { log: await openPostgresLog({ url, schema, leaseMs, owner, shards: s.shards, claim: cluster === true ? "fair" : "all" }) };
  }
  const { prepareLocalLog } = await import("../storage/local-log.js");
  const local = await prepareLocalLog({
    dir: s.storage.dir,
    shards: s.shards,
    flush: s.flush,
    repair: s.repair,
    ...(s.segmentBytes !== undefined ? { segmentBytes: s.segmentBytes } : {}),
    ...(options.fileLayer !== undefined ? { fileLayer: options.fileLayer } : {}),
    ...(visitor !== undefined ? { visitor } : {}),
  });
  return { log: local, local };
}
