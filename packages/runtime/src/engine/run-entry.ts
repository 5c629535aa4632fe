import type { FinishedStatus } from "../core/status.js";
import type { ClosePolicy, ParentLink } from "../journal/records.js";
import { streamOf } from "../journal/stream-names.js";
import type { RunExecutor } from "../workflow/run-executor.js";

// `state` packs into one small integer the run's shard, how it finished, whether its finish record
// was appended, and the low bits of its start time: every parked run pays for each field its entry
// has, and a time in milliseconds (about 2^41) held as a number costs a 16-byte box besides.
const SHARD_MASK = 0x7ff; // `Config.shards` allows 1,024
const STATUS_SHIFT = 11;
const STATUS_MASK = 0b111 << STATUS_SHIFT;
const FINISH_APPENDED = 1 << 14;
const START_SHIFT = 15;
/** The span of the start time's low bits: 15 bits, so that `state` stays below 2^30, a small integer. */
const START_SPAN = 1 << 15;
const BELOW_START = START_SPAN - 1;
const STATUSES: readonly (FinishedStatus | undefined)[] = [undefined, "ok", "failed", "cancelled", "terminated"];

/**
 * The engine's index entry of one workflow ID: all that a parked run costs in memory. Its journal
 * stays in the log until something wakes the run.
 */
export class RunEntry {
  /**
   * The workflow type; once the run has any of what few runs have (attributes, a parent, children,
   * a second timer), an object holding those and the type. The entry of every other run is a field
   * smaller: it is what a parked run costs, and what recovery builds a hundred thousand of.
   */
  private typeOrRare: string | RareFields = "";
  runId = 0;
  /**
   * The log stream of the current run: each run of an ID has its own, so old runs drop whole. Kept
   * rather than rebuilt, so every append hands the log the same string and its hash is computed once.
   */
  stream = "";
  /** The start time over `START_SPAN`, rounded down (its remainder is in `state`). */
  private startedHigh = 0;
  /** Records appended to the current run's journal (the next record's position). */
  appended = 0;
  /** Records known durable: positions below this are in the log. */
  durable = 0;
  /** The shard, how the run finished and whether its finish record was appended (see the masks above). */
  private state: number;
  /**
   * Until the run finishes, the call number of its first pending durable timer (more go to `rare`);
   * once it finished, when. A finished run has no timers, so one field serves both. The due times
   * stay in the engine's timer queue only. "None" is `undefined`, not 0: a field V8 has seen hold
   * only small integers would, on the first end time stored, be boxed in every entry.
   */
  private timerOrEnd: number | undefined = undefined;
  /**
   * While the run is in memory, its executor; once this process parked it, how many records its
   * code had reacted to by then (see `reacted`). A run is in memory or parked, so one field serves.
   */
  private resident: RunExecutor | number | undefined = undefined;

  constructor(
    readonly id: string,
    shard: number,
  ) {
    this.state = shard;
  }

  get type(): string {
    const typeOrRare = this.typeOrRare;
    return typeof typeOrRare === "string" ? typeOrRare : typeOrRare.type;
  }

  private get rare(): RareFields | undefined {
    const typeOrRare = this.typeOrRare;
    return typeof typeOrRare === "string" ? undefined : typeOrRare;
  }

  private rareFields(): RareFields {
    const typeOrRare = this.typeOrRare;
    if (typeof typeOrRare !== "string") return typeOrRare;
    const rare: RareFields = { type: typeOrRare };
    this.typeOrRare = rare;
    return rare;
  }

  /** The run's executor while it is in memory. */
  get executor(): RunExecutor | undefined {
    const resident = this.resident;
    return typeof resident === "number" ? undefined : resident;
  }

  set executor(executor: RunExecutor | undefined) {
    this.resident = executor;
  }

  /**
   * For a run parked by this process: how many records its code had reacted to when it was parked,
   * so that code re-run for them on its next load counts as replay (`ctx.log` stays quiet).
   */
  get reacted(): number | undefined {
    const resident = this.resident;
    return typeof resident === "number" ? resident : undefined;
  }

  /** Drops the run's executor; its code had reacted to the first `reacted` records (when known). */
  park(reacted: number | undefined): void {
    this.resident = reacted;
  }

  get shard(): number {
    return this.state & SHARD_MASK;
  }

  /** When the current run started. */
  get startedAt(): number {
    return this.startedHigh * START_SPAN + (this.state >>> START_SHIFT);
  }

  private setStartedAt(at: number): void {
    const high = Math.floor(at / START_SPAN);
    const low = at - high * START_SPAN;
    // A fractional time (a test's clock) is kept whole in `startedHigh`: dividing by a power of two is exact.
    if (Number.isInteger(low)) {
      this.startedHigh = high;
      this.state = (this.state & BELOW_START) | (low << START_SHIFT);
    } else {
      this.startedHigh = at / START_SPAN;
      this.state &= BELOW_START;
    }
  }

  /** How the current run finished, once its finish record is durable. */
  get finished(): FinishedStatus | undefined {
    return STATUSES[(this.state & STATUS_MASK) >> STATUS_SHIFT];
  }

  /** When the current run finished, once its finish record is durable. */
  get endedAt(): number | undefined {
    return (this.state & STATUS_MASK) === 0 ? undefined : this.timerOrEnd;
  }

  /**
   * A finish record was appended to the current run (durable or not yet): nothing may follow it in
   * the journal, so later records are refused even before `finished` is set.
   */
  get finishAppended(): boolean {
    return (this.state & FINISH_APPENDED) !== 0;
  }

  /** A finish record was appended to the current run; it may not be durable yet. */
  finishing(): void {
    this.state |= FINISH_APPENDED;
  }

  /** The current run's finish record is durable: it ended `status` at `at`, none of its timers is pending. */
  finish(status: FinishedStatus, at: number): void {
    this.state = (this.state & ~STATUS_MASK) | FINISH_APPENDED | (STATUSES.indexOf(status) << STATUS_SHIFT);
    this.timerOrEnd = at;
    if (this.rare !== undefined) this.rare.moreTimers = undefined;
  }

  /** The run's search attributes, once it set any. */
  get attributes(): Record<string, unknown> | undefined {
    return this.rare?.attributes;
  }

  set attributes(value: Record<string, unknown> | undefined) {
    if (value !== undefined || this.rare !== undefined) this.rareFields().attributes = value;
  }

  /**
   * The requests (of messages from other workflows, of a cluster's context calls) whose records
   * this run's journal holds, once something asked (see `LocalRuns.performedRequest`); `undefined`
   * until then, so runs no message reaches pay nothing for it.
   */
  get requests(): Set<string> | undefined {
    return this.rare?.requests;
  }

  set requests(value: Set<string> | undefined) {
    if (value !== undefined || this.rare !== undefined) this.rareFields().requests = value;
  }

  /** For a child run: the parent run and its call that started it. */
  get parent(): ParentLink | undefined {
    return this.rare?.parent;
  }

  set parent(value: ParentLink | undefined) {
    if (value !== undefined || this.rare !== undefined) this.rareFields().parent = value;
  }

  /** The trace context the run's start carried (a W3C `traceparent`), parent of its spans. */
  get trace(): string | undefined {
    return this.rare?.trace;
  }

  set trace(value: string | undefined) {
    if (value !== undefined || this.rare !== undefined) this.rareFields().trace = value;
  }

  /**
   * Why the run cannot go on, once the engine found it so (its code no longer matches its journal,
   * its workflow could not be built, a key its journal was sealed with is missing), until it went on.
   */
  get stopped(): Error | undefined {
    return this.rare?.stopped;
  }

  set stopped(value: Error | undefined) {
    if (value !== undefined || this.rare !== undefined) this.rareFields().stopped = value;
  }

  /** Unfinished children of this run and what to do with them when it ends. */
  get children(): Map<string, ChildLink> | undefined {
    return this.rare?.children;
  }

  set children(value: Map<string, ChildLink> | undefined) {
    if (value !== undefined || this.rare !== undefined) this.rareFields().children = value;
  }

  /** Records that call `seq` set a durable timer (its due time is the timer queue's). */
  setTimer(seq: number): void {
    if (this.finished !== undefined) return;
    if (this.timerOrEnd === undefined || this.timerOrEnd === seq) this.timerOrEnd = seq;
    else (this.rareFields().moreTimers ??= new Set()).add(seq);
  }

  /** Whether the timer of call `seq` is pending: set and neither fired, cancelled nor ended with its run. */
  hasTimer(seq: number): boolean {
    if (this.finished !== undefined) return false;
    return seq === this.timerOrEnd || this.rare?.moreTimers?.has(seq) === true;
  }

  /** The timer of call `seq` fired or is no longer needed. */
  clearTimer(seq: number): void {
    if (this.finished !== undefined) return;
    if (seq === this.timerOrEnd) this.timerOrEnd = undefined;
    else this.rare?.moreTimers?.delete(seq);
  }

  /** The run's shard is no longer held here: none of its timers fires in this process. */
  clearTimers(): void {
    if (this.finished === undefined) this.timerOrEnd = undefined;
    if (this.rare !== undefined) this.rare.moreTimers = undefined;
  }

  /** Forgets the previous run of this ID before a new one starts (`stream`: the run's stream name, when at hand). */
  reset(type: string, runId: number, startedAt: number, stream = streamOf(this.id, runId)): void {
    this.stream = stream;
    this.typeOrRare = type;
    this.runId = runId;
    this.state &= SHARD_MASK;
    this.setStartedAt(startedAt);
    this.timerOrEnd = undefined;
    this.appended = 0;
    this.durable = 0;
    this.resident = undefined;
  }
}

export type { ParentLink };

/** An unfinished child of a run and what to do with it when the run ends. */
export interface ChildLink {
  seq: number;
  runId: number;
  close: ClosePolicy;
}

interface RareFields {
  readonly type: string;
  attributes?: Record<string, unknown> | undefined;
  requests?: Set<string> | undefined;
  parent?: ParentLink | undefined;
  children?: Map<string, ChildLink> | undefined;
  moreTimers?: Set<number> | undefined;
  trace?: string | undefined;
  stopped?: Error | undefined;
}
