import type { FinishedStatus } from "../core/status.js";
import { streamOf } from "../journal/stream-names.js";
import type { RunExecutor } from "../workflow/run-executor.js";

/**
 * The engine's index entry of one workflow ID: all that a parked run costs in memory. Its journal
 * stays in the log until something wakes the run.
 */
export class RunEntry {
  type = "";
  runId = 0;
  /**
   * The log stream of the current run: each run of an ID has its own, so old runs drop whole. Kept
   * rather than rebuilt, so every append hands the log the same string and its hash is computed once.
   */
  stream = "";
  finished: FinishedStatus | undefined = undefined;
  startedAt = 0;
  endedAt: number | undefined = undefined;
  /** Records appended to the current run's journal (the next record's position). */
  appended = 0;
  /** Records known durable: positions below this are in the log. */
  durable = 0;
  /**
   * A finish record was appended to the current run (durable or not yet): nothing may follow it in
   * the journal, so later records are refused even before `finished` is set.
   */
  finishAppended = false;
  // Pending durable timers (call number → due time). Most runs wait on one timer at a time, so the
  // first is held inline and more go to `rare`: a parked run costs its index entry only.
  private timerSeq = 0;
  private timerUntil = 0;
  /**
   * What few runs have (attributes, a parent, children, a second timer), kept apart so that the
   * entry of every other run is four fields smaller: it is what a parked run costs, and what
   * recovery builds a hundred thousand of.
   */
  private rare: RareFields | undefined = undefined;
  /** The run's executor while it is in memory. */
  executor: RunExecutor | undefined = undefined;
  loading: Promise<RunExecutor> | undefined = undefined;

  constructor(
    readonly id: string,
    readonly shard: number,
  ) {}

  /** The run's search attributes, once it set any. */
  get attributes(): Record<string, unknown> | undefined {
    return this.rare?.attributes;
  }

  set attributes(value: Record<string, unknown> | undefined) {
    if (value !== undefined || this.rare !== undefined) (this.rare ??= {}).attributes = value;
  }

  /**
   * The requests (of messages from other workflows, of a cluster's forwarded calls) whose records
   * this run's journal holds, once something asked (see `LocalRuns.performedRequest`); `undefined`
   * until then, so runs no message reaches pay nothing for it.
   */
  get requests(): Set<string> | undefined {
    return this.rare?.requests;
  }

  set requests(value: Set<string> | undefined) {
    if (value !== undefined || this.rare !== undefined) (this.rare ??= {}).requests = value;
  }

  /**
   * For a run parked by this process: how many records its code had reacted to when it was parked,
   * so that code re-run for them on its next load counts as replay (`ctx.log` stays quiet).
   */
  get reacted(): number | undefined {
    return this.rare?.reacted;
  }

  set reacted(value: number | undefined) {
    if (value !== undefined || this.rare !== undefined) (this.rare ??= {}).reacted = value;
  }

  /** For a child run: the parent run and its call that started it. */
  get parent(): ParentLink | undefined {
    return this.rare?.parent;
  }

  set parent(value: ParentLink | undefined) {
    if (value !== undefined || this.rare !== undefined) (this.rare ??= {}).parent = value;
  }

  /** Unfinished children of this run and what to do with them when it ends. */
  /** The trace context the run's start carried (a W3C `traceparent`), parent of its spans. */
  get trace(): string | undefined {
    return this.rare?.trace;
  }

  set trace(value: string | undefined) {
    if (value !== undefined || this.rare !== undefined) (this.rare ??= {}).trace = value;
  }

  get children(): Map<string, ChildLink> | undefined {
    return this.rare?.children;
  }

  set children(value: Map<string, ChildLink> | undefined) {
    if (value !== undefined || this.rare !== undefined) (this.rare ??= {}).children = value;
  }

  /** Records that call `seq` set a durable timer due at `until`. */
  setTimer(seq: number, until: number): void {
    if (this.timerSeq === 0 || this.timerSeq === seq) {
      this.timerSeq = seq;
      this.timerUntil = until;
    } else ((this.rare ??= {}).moreTimers ??= new Map()).set(seq, until);
  }

  /** When the timer of call `seq` is due, or `undefined` when it is not pending. */
  timerDue(seq: number): number | undefined {
    return seq === this.timerSeq ? this.timerUntil : this.rare?.moreTimers?.get(seq);
  }

  /** Calls `fn` with each pending timer's call number and due time. */
  eachTimer(fn: (seq: number, until: number) => void): void {
    if (this.timerSeq !== 0) fn(this.timerSeq, this.timerUntil);
    for (const [seq, until] of this.rare?.moreTimers ?? []) fn(seq, until);
  }

  /** The timer of call `seq` fired or is no longer needed. */
  clearTimer(seq: number): void {
    if (seq === this.timerSeq) this.timerSeq = 0;
    else this.rare?.moreTimers?.delete(seq);
  }

  /** The run ended: none of its timers is pending any more. */
  clearTimers(): void {
    this.timerSeq = 0;
    if (this.rare !== undefined) this.rare.moreTimers = undefined;
  }

  /** Forgets the previous run of this ID before a new one starts (`stream`: the run's stream name, when at hand). */
  reset(type: string, runId: number, startedAt: number, stream = streamOf(this.id, runId)): void {
    this.stream = stream;
    this.rare = undefined;
    this.type = type;
    this.runId = runId;
    this.finished = undefined;
    this.startedAt = startedAt;
    this.endedAt = undefined;
    this.appended = 0;
    this.durable = 0;
    this.finishAppended = false;
    this.clearTimers();
    this.executor = undefined;
    this.loading = undefined;
  }
}

/** For a child run: the parent run and the call of it that started the child. */
export interface ParentLink {
  readonly id: string;
  readonly runId: number;
  readonly seq: number;
}

/** An unfinished child of a run and what to do with it when the run ends. */
export interface ChildLink {
  seq: number;
  runId: number;
  close: "terminate" | "request-cancel" | "abandon";
}

interface RareFields {
  attributes?: Record<string, unknown> | undefined;
  requests?: Set<string> | undefined;
  reacted?: number | undefined;
  parent?: ParentLink | undefined;
  children?: Map<string, ChildLink> | undefined;
  moreTimers?: Map<number, number> | undefined;
  trace?: string | undefined;
}
