import type { Clock, ClockTimer } from "../core/clock.js";
import { FuseeError, ShutDownError, StorageError } from "../core/errors.js";
import { recurrenceOf, type Recurrence } from "../journal/recurrence.js";
import { recurrenceOfSpec, recurrenceSpec, sameRecurrence, type RecurrenceSpec } from "../journal/schedule-coverage.js";
import { ScheduleState, sameSettings, scheduleRunId, type ScheduleDescription, type ScheduleSettings } from "../journal/schedule-state.js";
import type { ScheduleStateRecord, ScheduleTickRecord, SystemRecord } from "../journal/system-records.js";
import { retryDelay, startOnce, whenFinished, type FlowRuns } from "./flow-runs.js";
import { keepUnrecorded, ScheduleStream } from "./schedule-stream.js";
import { endRunning, pruneEnded } from "./schedule-overlap.js";
import { StartSlots } from "./start-slots.js";
import type { SystemLog } from "./system-streams.js";

export { scheduleRunId, type ScheduleDescription } from "../journal/schedule-state.js";

/** What a schedule needs of the engine. */
export interface ScheduleDeps {
  readonly sys: SystemLog;
  readonly runs: FlowRuns;
  readonly clock: Clock;
  readonly failed: (e: unknown) => void;
  /** Whether this process may still start work for the shard: false once its lease ran out on its clock, before the shard is forgotten. */
  readonly holds: (shard: number) => boolean;
}

/** Instants a backfill starts between two progress records. */
const PAGE = 256;
/** Backfilled runs that may be unfinished at once; the backfill waits when it has this many. */
const MAX_IN_FLIGHT = 1024;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * One schedule: its state, its timer and its backfills. Every change is a record of the
 * schedule's stream (`$schedule/<name>/<generation>`), applied to the state as it is appended and
 * again, in order, on recovery. A run is started before the record saying so is appended, and
 * under the instant's run ID, so a crash in between neither loses the instant nor starts it twice.
 */
export class ScheduleRuntime extends ScheduleState {
  private readonly stream: ScheduleStream;
  /** Instants being started right now, not covered yet. */
  private readonly claimed = new Set<number>();
  /** Instants whose run this process started (or is starting) and whose tick is not applied yet: counted in `started` ahead. */
  private readonly starting = new Set<number>();
  /** Instants the live ticker passed the cursor over and whose tick is not applied yet (see `snapshotRecord`). */
  private readonly liveUnrecorded = new Set<number>();
  private timer: ClockTimer | undefined;
  private readonly retries = new Set<ClockTimer>();
  private failures = 0;
  private deleted = false;
  /** Why the schedule's work here stopped (see `close`); undefined while it goes on. */
  private closedBy: Error | undefined;
  private backfillSeq = 0;
  private queue: Promise<void> = Promise.resolve();
  private readonly slots = new StartSlots(MAX_IN_FLIGHT);
  /** Settles once `open` dealt with the instants missed before it. */
  private opened: Promise<void> = Promise.resolve();

  constructor(
    name: string,
    state: ScheduleStateRecord,
    gen: number,
    private readonly deps: ScheduleDeps,
  ) {
    super(name, state);
    this.stream = new ScheduleStream(name, gen, {
      sys: deps.sys,
      failed: deps.failed,
      snapshot: () => this.snapshotRecord(deps.clock.now()),
      detach: (work) => this.detach(work),
    });
  }

  /** Starts the schedule's work after it was created or recovered: its timer, backfills and catch-up. */
  open(): void {
    const recovered = this.recurrence.next(this.cursor);
    // The instants missed while down were due before any pause that came later: one asked for while
    // the recovery below reads runs' statuses, or one an earlier engine recorded and then stopped
    // before it caught up. They are dealt with as of now, or as of that earlier pause.
    const openedAt = this.deps.clock.now();
    const catchUpTo = this.paused ? this.pausedAt : openedAt;
    const ready = this.serial(async () => {
      // Statuses of runs on other shards may not be readable now (a forward cut short): the runs
      // recovered as running stay so, and an unrecorded run is counted when its instant is started.
      await pruneEnded(this.deps.runs, this.active).catch(() => undefined);
      await this.adoptUnrecorded(recovered).catch(() => undefined);
      // A trigger a crash cut short: its run may exist without its record (then it is adopted), or not.
      for (const t of [...this.triggering]) await this.startInstant(t, "trigger");
      for (const id of this.active) this.watch(id);
      if (this.buffered !== undefined && this.active.size === 0) await this.startBuffered();
    });
    this.detach(ready);
    for (const b of this.backfills.values()) this.detach(this.runBackfill(b.id));
    // The missed instants are dealt with once a run begun before the crash is known to be running.
    const caughtUp = ready
      .catch(() => undefined)
      .then(() => {
        if (this.closed || this.deleted) return;
        if (catchUpTo !== undefined) this.due(false, catchUpTo);
        this.arm();
      });
    this.detach(caughtUp);
    this.opened = caughtUp.catch(() => undefined);
  }

  private get closed(): boolean {
    return this.closedBy !== undefined;
  }

  /** Stops the schedule's work here: its shard was let go (`why` says so) or the engine shuts down. */
  close(why: Error = new ShutDownError(`schedule '${this.name}' is closed: the engine is shutting down`)): void {
    this.closedBy = why;
    this.stopTimers();
  }

  /**
   * Changes the spec (when it differs) from now on; the schedule keeps its counts, covered instants
   * and pause state. The instants missed before the engine opened are caught up under the spec they
   * were missed under, and the new spec's instants before the update were never due: the cursor
   * moves to the update, in the same record as the spec, so a power loss keeps both or neither.
   */
  async update(settings: ScheduleSettings): Promise<void> {
    await this.opened;
    if (this.closed) throw this.closedBy;
    if (sameSettings(this.settings, settings)) return;
    // An instant of the current spec already due whose timer has not fired yet (a late timer) is
    // dealt with as that timer would, before the cursor moves past it to the update.
    if (!this.paused) this.due(true);
    const before = recurrenceSpec(this.settings);
    this.settings = settings;
    this.recurrence = recurrenceOf(settings);
    if (!sameRecurrence(before, settings)) {
      // A backfill under way goes on over the instants it was asked for.
      for (const b of this.backfills.values()) b.spec ??= before;
      this.covered.changed(settings);
    }
    this.cursor = Math.max(this.cursor, this.deps.clock.now());
    await this.stream.snapshot();
    this.arm();
  }

  describe(): ScheduleDescription {
    return this.describeAt(this.deps.clock.now());
  }

  async pause(): Promise<void> {
    if (this.paused) return;
    this.timer?.cancel();
    this.timer = undefined;
    await this.write({ kind: "schedule-pause", at: this.deps.clock.now(), paused: true });
  }

  async resume(): Promise<void> {
    // The resume moves the cursor to now: the instants missed before the engine opened are dealt with first.
    await this.opened;
    if (!this.paused) return;
    await this.write({ kind: "schedule-pause", at: this.deps.clock.now(), paused: false });
    this.arm();
  }

  /** Starts a run for the current instant now (the overlap policy applies), paused or not. */
  trigger(): Promise<void> {
    return this.instant(this.deps.clock.now(), "trigger", true);
  }

  /** Starts every instant of `[from, to]` that the schedule never dealt with; resolves once the backfill is recorded. */
  backfill(from: number, to: number): Promise<void> {
    return this.startBackfill(from, to, false);
  }

  /** Stops the schedule and drops its stream; its runs go on. */
  async delete(): Promise<void> {
    this.deleted = true;
    this.stopTimers();
    await this.stream.drop();
  }

  // ---- the live ticker ----

  private arm(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.paused || this.deleted || this.closed) return;
    const next = this.recurrence.next(this.cursor);
    if (next === undefined) return;
    this.timer = this.deps.clock.schedule(Math.max(0, next - this.deps.clock.now()), () => {
      this.timer = undefined;
      if (this.paused || this.deleted || this.closed) return;
      this.due(true);
      this.arm();
    });
  }

  /**
   * Deals with the instants after the cursor that are due. On time, the latest starts and any
   * earlier ones (a stalled event loop) follow the catch-up policy; after a restart, all of them do.
   */
  private due(onTime: boolean, now = this.deps.clock.now()): void {
    const latest = this.recurrence.latest(now);
    if (latest === undefined || latest <= this.cursor) return;
    const first = this.recurrence.next(this.cursor) as number;
    this.cursor = latest;
    const policy = this.settings.catchUp;
    if (policy === "all" && first < latest) {
      this.detach(this.startBackfill(first, latest, true));
      return;
    }
    if (first < latest) {
      const to = latest - 1;
      this.detach(this.write({ kind: "schedule-skip", at: now, from: first, to, count: this.recurrence.count(first, to) }));
    }
    // After downtime "one" and "all" start the latest instant (for "all", the only one missed).
    if (onTime || policy !== "none") this.detach(this.instant(latest, "live"));
    else this.detach(this.write({ kind: "schedule-skip", at: now, from: latest, to: latest, count: 1 }));
  }

  /**
   * One instant, live or triggered: the overlap policy decides whether its run starts. A caller
   * that waits for it (`report`: a trigger) hears a storage failure of the start; the instant is
   * tried again either way.
   */
  private instant(t: number, source: "live" | "trigger", report = false): Promise<void> {
    if (this.deleted || this.closed || this.covered.has(t) || this.claimed.has(t)) return Promise.resolve();
    this.claimed.add(t);
    if (source === "live") this.liveUnrecorded.add(t);
    return this.serial(async () => {
      try {
        await pruneEnded(this.deps.runs, this.active);
        if (this.closed || this.deleted) return;
        if (this.active.size > 0) {
          switch (this.settings.overlap) {
            case "skip":
              return this.tick(t, "skipped", source);
            case "buffer-one":
              return this.tick(t, this.buffered === undefined ? "buffered" : "skipped", source);
            case "cancel-other":
            case "terminate-other":
              await endRunning(this.deps.runs, this.active, this.name, this.settings.overlap);
              break;
            case "allow-all":
              break;
          }
        }
      } catch (e) {
        // The running runs' statuses could not be read, or one could not be ended (a forward cut
        // short, a run's shard moving): the instant is tried again later, not left claimed.
        this.claimed.delete(t);
        this.startFailed(e, () => this.detach(this.instant(t, source)));
        if (report) throw e;
        return;
      }
      const failure = await this.startInstant(t, source);
      if (report && failure instanceof StorageError) throw failure;
    });
  }

  /** Starts the instant's run and records it; returns why the start failed (it is tried again later). */
  private async startInstant(t: number, source: ScheduleTickRecord["source"]): Promise<unknown> {
    const id = scheduleRunId(this.name, t);
    if (this.closed || this.deleted) return undefined;
    if (source === "trigger" && !this.triggering.has(t)) await this.tick(t, "triggering", source);
    const again = (): void => this.detach(source === "buffer" ? this.serial(() => this.startBuffered()) : this.instant(t, source));
    if (!this.mayStart()) {
      this.claimed.delete(t);
      // Tried again as a failed start is: a lease renewed late lives on, and a lost shard's schedule is closed by then.
      this.startFailed(this.leaseLapsed(), again);
      return undefined;
    }
    // Counted before the start, as a backfill page's runs are: the run's code may ask at once.
    this.startedUnrecorded++;
    this.starting.add(t);
    try {
      await startOnce(this.deps.runs, this.settings.workflow, id, this.settings.input);
    } catch (e) {
      this.uncount(t);
      this.claimed.delete(t);
      this.startFailed(e, again);
      return e;
    }
    if (this.deleted || this.closed) return undefined;
    this.failures = 0;
    await this.tick(t, "started", source);
    this.watch(id);
    return undefined;
  }

  /**
   * Whether this process may start the schedule's runs now: the schedule is neither closed nor
   * deleted, and this process's lease on its shard has not run out. A process stopped past its
   * lease wakes with its timers overdue, and they may fire before it hears of the loss; the shard's
   * next holder deals with their instants (and may have paused, changed or deleted the schedule),
   * so a run started here would be one the schedule never wanted, or a second one.
   */
  private mayStart(): boolean {
    return !this.closed && !this.deleted && this.deps.holds(this.deps.sys.shardOf("schedule", this.name));
  }

  /** Why a start was not made: this process's lease on the schedule's shard ran out on its clock. */
  private leaseLapsed(): FuseeError {
    return new FuseeError(`schedule '${this.name}': this process's lease on its shard ran out on its clock; the start is tried again`);
  }

  private tick(instant: number, outcome: ScheduleTickRecord["outcome"], source: ScheduleTickRecord["source"]): Promise<void> {
    return this.write({ kind: "schedule-tick", at: this.deps.clock.now(), instant, outcome, source });
  }

  protected override applyTick(r: ScheduleTickRecord): void {
    super.applyTick(r);
    if (r.outcome !== "triggering") this.liveUnrecorded.delete(r.instant);
    this.claimed.delete(r.instant);
    // Now in `started`, the run this process counted ahead of its record is counted once.
    this.uncount(r.instant);
  }

  /** The whole state as one record, with the live instants whose tick is not recorded yet kept (see `keepUnrecorded`). */
  protected override snapshotRecord(at: number): ScheduleStateRecord {
    return keepUnrecorded(super.snapshotRecord(at), this.liveUnrecorded, this.starting);
  }

  /** Stops counting ahead the run of instant `t` (its record is in, or its start failed). */
  private uncount(t: number): void {
    if (this.starting.delete(t)) this.startedUnrecorded--;
  }

  /** Follows a run the schedule started until it ends, then starts the buffered instant if any. */
  private watch(id: string): void {
    this.detach(
      whenFinished(this.deps.runs, id).then(async () => {
        if (this.closed || this.deleted) return;
        this.active.delete(id);
        if (this.buffered !== undefined && this.active.size === 0) await this.serial(() => this.startBuffered());
      }),
    );
  }

  private async startBuffered(): Promise<void> {
    const t = this.buffered;
    if (t === undefined || this.closed || this.deleted) return;
    await pruneEnded(this.deps.runs, this.active);
    if (this.active.size === 0 && !this.closed && !this.deleted) await this.startInstant(t, "buffer");
  }

  /**
   * A crash between an instant's start and its record leaves the run without the record: the next
   * instant after the recovered cursor may have a run. It is the schedule's, and it counts as running
   * for the overlap policy; otherwise a missed-instant policy that skips it would start another run
   * beside it.
   */
  private async adoptUnrecorded(t: number | undefined): Promise<void> {
    // Whatever the pause and this process's clock say now: the run exists, so an engine started it.
    if (t === undefined || this.covered.has(t)) return;
    if ((await this.deps.runs.status(scheduleRunId(this.name, t))) === undefined || this.closed) return;
    await this.tick(t, "started", "live");
  }

  // ---- backfills ----

  private async startBackfill(from: number, to: number, catchUp: boolean): Promise<void> {
    const id = `${this.deps.clock.now()}-${++this.backfillSeq}`;
    await this.write({ kind: "schedule-backfill", at: this.deps.clock.now(), id, from, to, catchUp });
    this.detach(this.runBackfill(id));
  }

  /**
   * Works through a backfill a page at a time: starts the page's uncovered instants, records the
   * page, yields to the event loop. Memory holds one page, never the whole range.
   */
  private async runBackfill(id: string): Promise<void> {
    const first = this.backfills.get(id);
    if (first === undefined || first.running) return;
    first.running = true;
    // A backfill under an earlier spec parses it once, not on every page (a cron spec is costly to parse).
    let earlier: { readonly spec: RecurrenceSpec; readonly recurrence: Recurrence } | undefined;
    try {
      for (;;) {
        const b = this.backfills.get(id);
        if (b === undefined || this.closed || this.deleted) return;
        if (b.spec !== undefined && earlier?.spec !== b.spec) earlier = { spec: b.spec, recurrence: recurrenceOfSpec(b.spec) };
        const recurrence = b.spec === undefined ? this.recurrence : earlier!.recurrence;
        const from = b.next;
        const page: number[] = [];
        let through = b.to;
        for (let t = recurrence.next(from - 1); t !== undefined && t <= b.to;) {
          const end = this.covered.endOf(t, b.spec);
          if (end !== undefined) {
            t = recurrence.next(end);
            continue;
          }
          if (!this.claimed.has(t)) {
            page.push(t);
            if (page.length === PAGE) {
              through = t;
              break;
            }
          }
          t = recurrence.next(t);
        }
        for (const t of page) this.claimed.add(t);
        let started = 0;
        let failure: unknown;
        await Promise.all(
          page.map(async (t) => {
            await this.slots.take(() => !this.closed && !this.deleted);
            if (this.closed || this.deleted) return;
            if (!this.mayStart()) {
              failure ??= this.leaseLapsed();
              return;
            }
            const runId = scheduleRunId(this.name, t);
            // Counted before the start: the run's code begins as soon as its start is durable,
            // and a `describe()` it prompts must count it. An instant not covered was never counted,
            // even when its run exists (a crash came between its start and its record).
            this.startedUnrecorded++;
            try {
              await startOnce(this.deps.runs, this.settings.workflow, runId, this.settings.input);
              started++;
              this.detach(whenFinished(this.deps.runs, runId).then(() => this.slots.free()));
            } catch (e) {
              this.startedUnrecorded--;
              this.slots.free();
              failure ??= e;
            }
          }),
        );
        if (this.closed || this.deleted) return;
        if (failure !== undefined) {
          // The page is started again; the runs it did start count then.
          this.startedUnrecorded -= started;
          for (const t of page) this.claimed.delete(t);
          const retry = await new Promise<boolean>((resolve) =>
            this.startFailed(
              failure,
              () => resolve(true),
              () => resolve(false),
            ),
          );
          if (!retry) return;
          continue;
        }
        this.failures = 0;
        for (const t of page) this.claimed.delete(t);
        this.startedUnrecorded -= started;
        await this.write({ kind: "schedule-backfill-page", at: this.deps.clock.now(), id, first: from, through, started });
        await nextTurn();
      }
    } finally {
      first.running = false;
    }
  }

  // ---- records ----

  /** Applies a record to the state and appends it; resolves once durable. */
  private write(record: SystemRecord): Promise<void> {
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
  private detach(work: Promise<unknown>): void {
    work.catch((e: unknown) => {
      if (!this.closed && !this.deleted) this.deps.failed(e);
    });
  }

  /** Runs overlap decisions one at a time, so two instants never both see no running run. */
  private serial(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * A start failed: it is tried again later, after a storage failure too. The run's shard may be
   * another process's, whose failure (or a forward cut short) says nothing of this engine; a
   * failure of this engine's own storage stopped it already, and its starts fail until it closes.
   */
  private startFailed(e: unknown, retry: () => void, giveUp: () => void = () => undefined): void {
    if (this.closed || this.deleted || e instanceof ShutDownError) return giveUp();
    this.lastError = `${(e as Error)?.message ?? String(e)}`;
    this.failures++;
    const timer = this.deps.clock.schedule(retryDelay(this.failures), () => {
      this.retries.delete(timer);
      if (this.closed || this.deleted) return giveUp();
      retry();
    });
    this.retries.add(timer);
  }

  private stopTimers(): void {
    this.timer?.cancel();
    this.timer = undefined;
    for (const t of this.retries) t.cancel();
    this.retries.clear();
    this.slots.wakeAll();
  }
}
