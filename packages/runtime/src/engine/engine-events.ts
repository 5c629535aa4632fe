import { CodecError, ConfigError, NonDeterminismError } from "../core/errors.js";
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
 * A shard's storage failed (a write or sync error, corruption found while reading) and the engine
 * stopped acknowledging records: pending and later calls reject with `error`. Reopen the engine once
 * the cause (a full disk, a failing device, a lost database) is fixed; what was synced is kept.
 */
export interface ShardFatalEvent {
  readonly kind: "shard-fatal";
  /** The shard whose storage failed, when the failure belongs to one. */
  readonly shard: number | undefined;
  readonly error: Error;
}

/**
 * A lease renewal on PostgreSQL ran late because the event loop was blocked: a third of the lease
 * or more. A little longer and the process loses its shards to another.
 */
export interface LeaseLateEvent {
  readonly kind: "lease-late";
  /** This process's owner name in the lease table. */
  readonly owner: string;
  readonly lateMs: number;
  readonly leaseMs: number;
}

/**
 * This process stopped holding a shard on PostgreSQL: its lease expired, another owner took it, its
 * storage failed, or it was released so another process could take it. The runs of the shard go on
 * wherever the shard is held next. A shard whose runs could not be recovered when it was taken (its
 * rows could not be read, or hold records the engine cannot make sense of) is given up as `"failed"`,
 * with the cause in `error`: the process goes on with its other shards, and the shard is taken again
 * (by another process, or by this one after a back-off that doubles with each failure, up to 30 s),
 * until one recovers it once the rows are repaired.
 */
export interface LeaseLostEvent {
  readonly kind: "lease-lost";
  readonly owner: string;
  readonly shard: number;
  readonly reason: "taken" | "expired" | "failed" | "released";
  readonly error: Error | undefined;
}

/**
 * A run stopped in this process without finishing: its class could not be constructed (`reason`
 * `"construct-failed"`, such as a dependency the container cannot resolve), its code no longer
 * matches its journal (`"non-determinism"`), or something else broke it (`"broken"`). Its journal is
 * untouched: deploy a fix (or guard the change with `ctx.patched`) and the run resumes on the next open.
 */
export interface RunStoppedEvent {
  readonly kind: "run-stopped";
  /** What stopped it: its code and journal disagree, its class could not be built, a key its journal was sealed with is missing. */
  readonly reason: "construct-failed" | "non-determinism" | "key-missing" | "broken";
  readonly workflowId: string;
  readonly workflowType: string;
  readonly runId: number;
  readonly error: Error;
}

/**
 * Something the engine found or did that an operator should know of, told to `engine.on("event")`
 * listeners, `EngineOptions.onEvent` and the `Config.logger`. What opening the storage did (each cut
 * recovery made, a move of the directory to the current format) is also kept by
 * `engine.recoveryEvents()`. The union gains kinds over time: handle the kinds you know and ignore
 * the rest.
 *
 * @example
 * const engine = await Engine.open(Config.local("./data"), {
 *   workflows: [Pay],
 *   onEvent: (e) => {
 *     if (e.kind === "recovery-cut") log.warn(`shard ${e.shard}: cut ${e.discardedBytes} bytes at ${e.segment}:${e.offset}: ${e.reason}`);
 *   },
 * });
 * engine.on("event", (e) => { if (e.kind === "run-stopped") alert(e.workflowId, e.error.message); });
 */
export type EngineEvent = RecoveryCutEvent | FormatMigratedEvent | ShardFatalEvent | LeaseLateEvent | LeaseLostEvent | RunStoppedEvent;

/** What opening a local log for writing did: its cuts, then a move to the current format. */
export function openEvents(log: LocalLog): EngineEvent[] {
  const events: EngineEvent[] = recoveryCuts(log);
  if (log.migratedFrom !== undefined) {
    events.push({ kind: "format-migrated", from: log.migratedFrom, to: log.manifest.format, dir: log.dir });
  }
  return events;
}

/** The event of a run that `error` stopped, named by what broke it. */
export function runStopped(run: { readonly id: string; readonly type: string; readonly runId: number }, error: Error): RunStoppedEvent {
  // A ConfigError breaks a run only where its class is constructed.
  const reason =
    error instanceof NonDeterminismError
      ? "non-determinism"
      : error instanceof ConfigError
        ? "construct-failed"
        : error instanceof CodecError
          ? "key-missing"
          : "broken";
  return { kind: "run-stopped", reason, workflowId: run.id, workflowType: run.type, runId: run.runId, error };
}
