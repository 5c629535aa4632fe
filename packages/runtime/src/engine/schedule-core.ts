import type { Clock } from "../core/clock.js";
import { FuseeError, ShutDownError } from "../core/errors.js";
import { ScheduleState, scheduleRunId } from "../journal/schedule-state.js";
import type { ScheduleStateRecord, ScheduleTickRecord, SystemRecord } from "../journal/system-records.js";
import type { FlowRuns } from "./flow-runs.js";
import { ScheduleStream } from "./schedule-stream.js";
import { StartRetries } from "./start-retries.js";
import type { SystemLog } from "./system-streams.js";

/** What a schedule needs of the engine. */
export interface ScheduleDeps {
  readonly sys: SystemLog;
  readonly runs: FlowRuns;
  readonly clock: Clock;
  readonly failed: (e: unknown) => void;
}

/**
 * What a live schedule's work shares, whatever it starts: the records it writes to its stream and
 * applies as it does, the instants it is starting, one overlap decision at a time, failed starts
 * tried again, the lease check before a start, and the stop, after which it writes nothing.
 */
export abstract class ScheduleCore extends ScheduleState {
  private readonly stream: ScheduleStream;
  /** Instants being started right now, not covered yet. */
  protected readonly claimed = new Set<number>();
  /** Instants whose run this process started (or is starting) and whose tick is not applied yet: counted in `started` ahead. */
  protected readonly starting = new Set<number>();
  /**
   * Runs whose start failed though it may have been performed (a forward whose answer was lost):
   * going, for the overlap policy, until a read of their status says otherwise or their start is
   * tried again. Not in `active`, which `describe` lists: they may not exist.
   */
  protected readonly doubtful = new Set<string>();
  protected readonly retries: StartRetries;
  protected deleted = false;
  /** Why the schedule's work here stopped (see `close`); undefined while it goes on. */
  protected closedBy: Error | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    name: string,
    state: ScheduleStateRecord,
    gen: number,
    protected readonly deps: ScheduleDeps,
  ) {
    super(name, state);
    this.retries = new StartRetries(deps.clock);
    this.stream = new ScheduleStream(name, gen, {
      sys: deps.sys,
      failed: deps.failed,
      snapshot: () => this.snapshotRecord(deps.clock.now()),
      detach: (work) => this.detach(work),
    });
  }

  protected get closed(): boolean {
    return this.closedBy !== undefined;
  }

  /** Stops the schedule's work here: its shard was let go (`why` says so) or the engine shuts down. */
  close(why: Error = new ShutDownError(`schedule '${this.name}' is closed: the engine is shutting down`)): void {
    this.closedBy = why;
    this.stopTimers();
  }

  /**
   * Whether this process may start the schedule's runs now: the schedule is neither closed nor
   * deleted, and this process's lease on its shard has not run out. A process stopped past its
   * lease wakes with its timers overdue, and they may fire before it hears of the loss; the shard's
   * next holder deals with their instants (and may have paused, changed or deleted the schedule),
   * so a run started here would be one the schedule never wanted, or a second one.
   */
  protected mayStart(): boolean {
    return !this.closed && !this.deleted && this.deps.sys.holds("schedule", this.name);
  }

  /** The shard of the schedule's stream, whose lease fences every start the schedule asks of another process. */
  protected get shard(): number {
    return this.deps.sys.shardOf("schedule", this.name);
  }

  /** Why a start was not made: this process's lease on the schedule's shard ran out on its clock. */
  protected leaseLapsed(): FuseeError {
    return new FuseeError(`schedule '${this.name}': this process's lease on its shard ran out on its clock; the start is tried again`);
  }

  protected tick(
    instant: number,
    outcome: ScheduleTickRecord["outcome"],
    source: ScheduleTickRecord["source"],
    request?: string,
  ): Promise<void> {
    return this.write({
      kind: "schedule-tick",
      at: this.deps.clock.now(),
      instant,
      outcome,
      source,
      ...(request === undefined ? {} : { request }),
    });
  }

  protected override applyTick(r: ScheduleTickRecord): void {
    super.applyTick(r);
    this.claimed.delete(r.instant);
    // Now in `started`, the run this process counted ahead of its record is counted once.
    this.uncount(r.instant);
  }

  /**
   * Calls `use` with the runs that may be going beside instant `t`'s: those started and those whose
   * start is in doubt. What `use` removes from the set (a run it found ended, or ended) is forgotten.
   */
  protected async besides<R>(t: number, use: (going: Set<string>) => Promise<R>): Promise<R> {
    const going = new Set([...this.active, ...this.doubtful]);
    going.delete(scheduleRunId(this.name, t));
    const before = [...going];
    try {
      return await use(going);
    } finally {
      for (const id of before)
        if (!going.has(id)) {
          this.active.delete(id);
          this.doubtful.delete(id);
        }
    }
  }

  /** Stops counting ahead the run of instant `t` (its record is in, or its start failed). */
  protected uncount(t: number): void {
    if (this.starting.delete(t)) this.startedUnrecorded--;
  }

  // ---- records ----

  /** Applies a record to the state and appends it; resolves once durable. */
  protected write(record: SystemRecord): Promise<void> {
    if (this.deleted) return Promise.resolve();
    // Once closed, the schedule's shard may be another process's (or this one's again, under a
    // schedule rebuilt from the log): a record from here would interleave with its holder's.
    if (this.closed) return Promise.reject(this.closedBy);
    this.apply(record);
    return this.stream.append(record);
  }

  // ---- plumbing ----

  /**
   * Lets `work` go on without waiting. Its writes report their own failures (`ScheduleStream.append`); anything
   * else that escapes it while the schedule is open is a failure of the schedules too.
   */
  protected detach(work: Promise<unknown>): void {
    work.catch((e: unknown) => {
      if (!this.closed && !this.deleted) this.deps.failed(e);
    });
  }

  /** Runs overlap decisions one at a time, so two instants never both see no running run. */
  protected serial(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * A start failed: it is tried again later, after a storage failure too. The run's shard may be
   * another process's, whose failure (or a forward cut short) says nothing of this engine; a
   * failure of this engine's own storage stopped it already, and its starts fail until it closes.
   */
  protected startFailed(e: unknown, retry: () => void, giveUp: () => void = () => undefined): void {
    if (this.closed || this.deleted || e instanceof ShutDownError) return giveUp();
    this.lastError = `${(e as Error)?.message ?? String(e)}`;
    this.retries.after(() => (this.closed || this.deleted ? giveUp() : retry()));
  }

  /** Stops every timer of the schedule's work here. */
  protected stopTimers(): void {
    this.retries.cancelAll();
  }

  /** Writes a snapshot of the state as the first record of a new generation of the stream. */
  protected snapshot(): Promise<void> {
    return this.stream.snapshot();
  }

  /** Drops the schedule's stream. */
  protected dropStream(): Promise<void> {
    return this.stream.drop();
  }
}
