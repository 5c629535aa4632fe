import type { LocalLog } from "../storage/local-log.js";

/**
 * Recovery cut a shard of the data directory while opening it: a write torn by a crash (never
 * acknowledged), or, with `Config.local(dir).repair()`, corruption and everything after it.
 */
export interface RecoveryCutEvent {
  readonly kind: "recovery-cut";
  readonly shard: number;
  /** Path of the segment file that was cut. */
  readonly segment: string;
  /** Offset of the first byte not kept. */
  readonly offset: number;
  /** Bytes that held data and were discarded, in this segment and, for a repair, the segments after it. */
  readonly discardedBytes: number;
  /** What was found there, in words. */
  readonly reason: string;
}

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

/** The cuts a local log's recovery made (or, read-only, left out) as events. */
export function recoveryCuts(log: LocalLog): RecoveryCutEvent[] {
  return log.recovery
    .filter((e) => e.kind !== "incomplete-tail")
    .map((e) => ({
      kind: "recovery-cut",
      shard: e.shard,
      segment: e.segment,
      offset: e.offset,
      discardedBytes: e.discardedBytes,
      reason: e.kind === "repaired" ? `cut by repair: ${e.reason}` : e.reason,
    }));
}
