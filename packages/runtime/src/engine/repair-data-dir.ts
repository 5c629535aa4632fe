import path from "node:path";
import { StorageError } from "../core/errors.js";
import { nodeFileLayer } from "../storage/file-layer.js";
import { openLocalLog } from "../storage/local-log.js";
import { readManifest } from "../storage/manifest.js";
import { type EngineEvent, openEvents } from "./engine-events.js";

/**
 * Cuts each shard of a local data directory at its first corruption (discarding it and everything
 * after it in that shard) and at a write torn by a crash, then closes it; what `fusee repair`
 * does, and what `Config.local(dir).repair()` does when an engine opens. Returns every cut (and, for
 * a directory of an older format, its move to the current one); no cut means nothing needed
 * cutting. No engine may be writing the directory meanwhile.
 *
 * @throws StorageError when `dir` is not a data directory, is open for writing elsewhere, or a cut
 * could not be written.
 * @example
 * for (const cut of await repairDataDir("./data")) console.log(`shard ${cut.shard}: cut at ${cut.segment}:${cut.offset}`);
 */
export async function repairDataDir(dir: string): Promise<EngineEvent[]> {
  const absolute = path.resolve(dir);
  if (nodeFileLayer.readdir(absolute) === undefined || readManifest(nodeFileLayer, absolute) === undefined) {
    throw new StorageError(`${absolute} is not a fusee data directory (it has no manifest); there is nothing to repair`);
  }
  const log = await openLocalLog({ dir: absolute, repair: true });
  await log.close();
  return openEvents(log);
}
