import type { LocalLog } from "../storage/local-log.js";
import { recoveryCuts } from "../storage/recovery-cuts.js";
import type { RecoveryCutEvent } from "../storage/recovery-cuts.js";

export type { RecoveryCutEvent } from "../storage/recovery-cuts.js";

/**
 * The data directory was written by an older version of fusee in an older on-disk format, and this
 * open moved it to the current one: each shard's active segment was sealed and new writes go to a
 * fresh segment. Versions of fusee that only read the older format refuse the directory from now on.
 */
export interface FormatMigratedEvent {
  readonly kind: "format-migrated";
  readonly from: number;
  readonly to: number;
  /** The data directory. */
  readonly dir: string;
}

/**
 * Something the engine found or did that the application should know of, told through
 * `EngineOptions.onEvent` and kept by `engine.recoveryEvents()`: each cut recovery made, and a move
 * of the directory to the current format. The union gains kinds over time: handle the kinds you
 * know and ignore the rest.
 *
 * @example
 * const engine = await Engine.open(Config.local("./data"), {
 *   workflows: [Pay],
 *   onEvent: (e) => {
 *     if (e.kind === "recovery-cut") log.warn(`shard ${e.shard}: cut ${e.discardedBytes} bytes at ${e.segment}:${e.offset}: ${e.reason}`);
 *   },
 * });
 */
export type EngineEvent = RecoveryCutEvent | FormatMigratedEvent;

/** What opening a local log for writing did: its cuts, then a move to the current format. */
export function openEvents(log: LocalLog): EngineEvent[] {
  const events: EngineEvent[] = recoveryCuts(log);
  if (log.migratedFrom !== undefined) {
    events.push({ kind: "format-migrated", from: log.migratedFrom, to: log.manifest.format, dir: log.dir });
  }
  return events;
}
