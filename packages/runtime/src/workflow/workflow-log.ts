import type { Logger, LogLevel } from "../core/logger.js";

/** Fields a log line carries besides the run's identity. */
export type LogFields = Readonly<Record<string, unknown>>;

/** What a {@link WorkflowLog} writes through: the run's executor, which knows whether it replays. */
export interface WorkflowLogBackend {
  log(level: LogLevel, message: string, fields: LogFields | undefined): void;
}

/**
 * `ctx.log`: a logger for workflow code that writes nothing while the run replays, so a line is
 * written once however often the code re-runs, and that puts the run's `workflowId`, `workflowType`
 * and `runId` on every line. It writes through the engine's logger (`Config.logger`) when one is
 * configured, else to the console.
 *
 * @example
 * this.ctx.log.info("payment captured", { cents });
 */
export class WorkflowLog {
  /** @internal Made by `Ctx`. */
  constructor(private readonly backend: WorkflowLogBackend) {}

  debug(message: string, fields?: LogFields): void {
    this.backend.log("debug", message, fields);
  }

  info(message: string, fields?: LogFields): void {
    this.backend.log("info", message, fields);
  }

  warn(message: string, fields?: LogFields): void {
    this.backend.log("warn", message, fields);
  }

  error(message: string, fields?: LogFields): void {
    this.backend.log("error", message, fields);
  }
}

/** The identity of the run a line belongs to. */
export interface RunIdentity {
  readonly workflowId: string;
  readonly workflowType: string;
  readonly runId: number;
}

/** Writes one line of workflow code: through `logger`, or to the console with the identity up front. */
export function writeRunLog(logger: Logger | undefined, run: RunIdentity, level: LogLevel, message: string, fields: LogFields | undefined): void {
  const identity = { workflowId: run.workflowId, workflowType: run.workflowType, runId: run.runId };
  if (logger !== undefined) {
    logger[level]({ ...fields, ...identity }, message);
    return;
  }
  const line = `[${run.workflowType} ${run.workflowId} run ${run.runId}] ${message}`;
  if (fields === undefined) console[level](line);
  else console[level](line, fields);
}
