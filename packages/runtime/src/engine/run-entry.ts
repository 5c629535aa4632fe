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
  // Pending durable timers (call number → due time). Most runs wait on one timer at a time, so the
  // first is held inline and a map is made only for more: a parked run costs its index entry only.
  private timerSeq = 0;
  private timerUntil = 0;
  private moreTimers: Map<number, number> | undefined = undefined;
  /** For a child run: the parent run and its call that started it. */
  parent: { readonly id: string; readonly runId: number; readonly seq: number } | undefined = undefined;
  /** Unfinished children of this run and what to do with them when it ends. */
  children: Map<string, { seq: number; runId: number; close: "terminate" | "request-cancel" | "abandon" }> | undefined = undefined;
  /** The run's executor while it is in memory. */
  executor: RunExecutor | undefined = undefined;
  loading: Promise<RunExecutor> | undefined = undefined;

  constructor(
    readonly id: string,
    readonly shard: number,
  ) {}

  /**
   * The log stream of the current run: each run of an ID has its own, so old runs drop whole. Kept
   * rather than rebuilt, so every append hands the log the same string and its hash is computed once.
   */
  stream = "";

  /** Records that call `seq` set a durable timer due at `until`. */
  setTimer(seq: number, until: number): void {
    if (this.timerSeq === 0 || this.timerSeq === seq) {
      this.timerSeq = seq;
      this.timerUntil = until;
    } else (this.moreTimers ??= new Map()).set(seq, until);
  }

  /** When the timer of call `seq` is due, or `undefined` when it is not pending. */
  timerDue(seq: number): number | undefined {
    return seq === this.timerSeq ? this.timerUntil : this.moreTimers?.get(seq);
  }

  /** The timer of call `seq` fired or is no longer needed. */
  clearTimer(seq: number): void {
    if (seq === this.timerSeq) this.timerSeq = 0;
    else this.moreTimers?.delete(seq);
  }

  /** The run ended: none of its timers is pending any more. */
  clearTimers(): void {
    this.timerSeq = 0;
    this.moreTimers = undefined;
  }

  /** Forgets the previous run of this ID before a new one starts (`stream`: the run's stream name, when at hand). */
  reset(type: string, runId: number, startedAt: number, stream = streamOf(this.id, runId)): void {
    this.stream = stream;
    this.parent = undefined;
    this.children = undefined;
    this.type = type;
    this.runId = runId;
    this.finished = undefined;
    this.startedAt = startedAt;
    this.endedAt = undefined;
    this.attributes = undefined;
    this.appended = 0;
    this.durable = 0;
    this.clearTimers();
    this.executor = undefined;
    this.loading = undefined;
  }
}

/** The log stream of run `runId` of workflow `id`. */
export function streamOf(id: string, runId: number): string {
  return `${id}#${runId}`;
}

/** Splits a stream name into workflow ID and run; IDs may hold '#', run numbers never do. */
export function parseStream(stream: string): { id: string; runId: number } | undefined {
  const at = stream.lastIndexOf("#");
  if (at < 0) return undefined;
  const runId = Number(stream.slice(at + 1));
  if (!Number.isInteger(runId) || runId < 1) return undefined;
  return { id: stream.slice(0, at), runId };
}
