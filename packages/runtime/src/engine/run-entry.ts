import type { FinishedStatus } from "../core/status.js";
import type { RunExecutor } from "../workflow/run-executor.js";

/**
 * The engine's index entry of one workflow ID: all that a parked run costs in memory. Its journal
 * stays in the log until something wakes the run.
 */
export class RunEntry {
  type = "";
  runId = 0;
  finished: FinishedStatus | undefined = undefined;
  startedAt = 0;
  endedAt: number | undefined = undefined;
  attributes: Record<string, unknown> | undefined = undefined;
  /** Records appended to the current run's journal (the next record's position). */
  appended = 0;
  /** Records known durable: positions below this are in the log. */
  durable = 0;
  /** Pending durable timers: call number → due time. */
  timers: Map<number, number> | undefined = undefined;
  /** The run's executor while it is in memory. */
  executor: RunExecutor | undefined = undefined;
  loading: Promise<RunExecutor> | undefined = undefined;

  constructor(
    readonly id: string,
    readonly shard: number,
  ) {}

  /** Forgets the previous run of this ID before a new one starts. */
  reset(type: string, runId: number, startedAt: number): void {
    this.type = type;
    this.runId = runId;
    this.finished = undefined;
    this.startedAt = startedAt;
    this.endedAt = undefined;
    this.attributes = undefined;
    this.appended = 0;
    this.durable = 0;
    this.timers = undefined;
    this.executor = undefined;
    this.loading = undefined;
  }
}
