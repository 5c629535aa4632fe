import type { Logger, LogLevel } from "../core/logger.js";
import type { EngineEvent } from "./engine-events.js";

/** The level, fields and message an event is logged with. */
export interface EventLine {
  readonly level: LogLevel;
  readonly fields: Record<string, unknown>;
  readonly message: string;
}

/** How an event reads in a log: its fields flat (errors as `err`, as pino expects) and a sentence. */
function eventLine(e: EngineEvent): EventLine {
  switch (e.kind) {
    case "recovery-cut":
      return {
        level: "warn",
        fields: { event: e.kind, shard: e.shard, segment: e.segment, offset: e.offset, bytes: e.discardedBytes },
        message: `recovery cut shard ${e.shard} at ${e.segment}:${e.offset}, discarding ${e.discardedBytes} bytes: ${e.reason}`,
      };
    case "format-migrated":
      return {
        level: "info",
        fields: { event: e.kind, from: e.from, to: e.to, dir: e.dir },
        message: `moved ${e.dir} from format ${e.from} to ${e.to}`,
      };
    case "shard-fatal":
      return {
        level: "error",
        fields: { event: e.kind, shard: e.shard, err: e.error },
        message: `${e.shard === undefined ? "storage" : `shard ${e.shard}`} failed; the engine acknowledges nothing more until it is reopened: ${e.error.message}`,
      };
    case "lease-late":
      return {
        level: "warn",
        fields: { event: e.kind, owner: e.owner, lateMs: e.lateMs, leaseMs: e.leaseMs },
        message: `owner "${e.owner}" renewed its shard leases ${Math.round(e.lateMs)} ms late (leaseMs ${e.leaseMs}): the event loop was blocked`,
      };
    case "lease-lost":
      return {
        level: e.reason === "released" ? "info" : "warn",
        fields: { event: e.kind, owner: e.owner, shard: e.shard, reason: e.reason, ...(e.error ? { err: e.error } : {}) },
        message: `owner "${e.owner}" no longer holds shard ${e.shard} (${e.reason})`,
      };
    case "run-stopped":
      return {
        level: "error",
        fields: { event: e.kind, reason: e.reason, workflowId: e.workflowId, workflowType: e.workflowType, runId: e.runId, err: e.error },
        message: `run ${e.runId} of ${e.workflowType} '${e.workflowId}' stopped (${e.reason}): ${e.error.message}`,
      };
  }
}

/** Writes the event to the logger; a logger that throws is not the engine's failure. */
export function logEvent(logger: Logger, e: EngineEvent): void {
  const line = eventLine(e);
  try {
    logger[line.level](line.fields, line.message);
  } catch {
    // The event still reaches the listeners; a broken logger must not stop the engine.
  }
}
