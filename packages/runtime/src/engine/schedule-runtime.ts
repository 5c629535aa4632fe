import type { ClockTimer } from "../core/clock.js";
import { StorageError } from "../core/errors.js";
import { recurrenceOf, type Recurrence } from "../journal/recurrence.js";
import { recurrenceOfSpec, recurrenceSpec, sameRecurrence, type RecurrenceSpec } from "../journal/schedule-coverage.js";
import {
  sameSettings,
  scheduleRunId,
  type BackfillState,
  type ScheduleDescription,
  type ScheduleSettings,
} from "../journal/schedule-state.js";
import type { ScheduleStateRecord, ScheduleTickRecord } from "../journal/system-records.js";
import { backfillPage } from "./backfill-page.js";
import { startOnce, whenFinished } from "./flow-runs.js";
import { ScheduleAdoption } from "./schedule-adoption.js";
import { hasEnded, overlapDecision, pruneEnded } from "./schedule-overlap.js";
import { keepUnrecorded } from "./schedule-stream.js";
import { StartSlots } from "./start-slots.js";

export { scheduleRunId, type ScheduleDescription } from "../journal/schedule-state.js";
export type { ScheduleDeps } from "./schedule-core.js";

/** Instants a backfill starts between two progress records. */
const PAGE = 256;
/** How long a run whose wait for its end failed while it went on is left before it is followed again. */
const WATCH_AGAIN_MS = 1_000;
/** Backfilled runs that may be unfinished at once; the backfill waits when it has this many. */
const MAX_IN_FLIGHT = 1024;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * One schedule: its state, its timer and its backfills. Every change is a record of the
 * schedule's stream (`$schedule/<name>/<generation>`), applied to the state as it is appended and
 * again, in order, on recovery. A run is started before the record saying so is appended, and
 * under the instant's run ID, so a crash in between neither loses the instant nor starts it twice.
 */
export class ScheduleRuntime extends ScheduleAdoption {
  /** Instants the live ticker passed the cursor over and whose tick is not applied yet (see `snapshotRecord`). */
  private readonly liveUnrecorded = new Set<number>();
  private timer: ClockTimer | undefined;
  private backfillSeq = 0;
  private readonly slots = new StartSlots(MAX_IN_FLIGHT);
  /** Settles once the page of a backfill under way is recorded or failed (see `runBackfill`). */
  private pageTurn: Promise<void> = Promise.resolve();
  /** Settles once `open` dealt with the instants missed before it. */
  private opened: Promise<void> = Promise.resolve();

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
      await this.adoptRecovered(recovered, openedAt);
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
        // A pause recorded while the recovery read statuses came after the instants due between the
        // open and it, whose timer was not armed yet: they are dealt with as that timer would have.
        if (catchUpTo === openedAt && this.paused && this.pausedAt !== undefined) this.due(true, this.pausedAt);
        this.arm();
      });
    this.detach(caughtUp);
    this.opened = caughtUp.catch(() => undefined);
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
    await this.snapshot();
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

  /**
   * Starts a run for the current instant now (the overlap policy applies), paused or not. A
   * trigger another process forwarded names its request: asked again of this shard's next owner,
   * it is found performed and starts nothing more.
   */
  trigger(request?: string): Promise<void> {
    if (request !== undefined && this.triggeredBy.includes(request)) return Promise.resolve();
    return this.instant(this.freeInstant(this.deps.clock.now()), "trigger", true, request);
  }

  /**
   * The first time from `t` on that no instant of the schedule took. A holder whose clock is behind
   * the one of an earlier holder of the shard may read a time that holder dealt with (an instant it
   * started, a span it skipped), and a trigger in the same millisecond as a live instant reads that
   * instant's: the trigger still starts a run of its own.
   */
  private freeInstant(t: number): number {
    for (;;) {
      const end = this.covered.endOf(t);
      if (end !== undefined) t = end + 1;
      else if (this.claimed.has(t) || this.triggering.has(t)) t++;
      else return t;
    }
  }

  /** Starts every instant of `[from, to]` that the schedule never dealt with; resolves once the backfill is recorded. */
  backfill(from: number, to: number): Promise<void> {
    return this.startBackfill(from, to, false);
  }

  /** Stops the schedule and drops its stream; its runs go on. */
  async delete(): Promise<void> {
    this.deleted = true;
    this.stopTimers();
    await this.dropStream();
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
      this.detach(this.skip(now, first, to, this.recurrence.count(first, to)));
    }
    // After downtime "one" and "all" start the latest instant (for "all", the only one missed).
    if (onTime || policy !== "none") this.detach(this.instant(latest, "live"));
    else this.detach(this.skip(now, latest, latest, 1));
  }

  /**
   * One instant, live or triggered: the overlap policy decides whether its run starts. A caller
   * that waits for it (`report`: a trigger) hears a storage failure of the start; the instant is
   * tried again either way.
   */
  private instant(t: number, source: "live" | "trigger", report = false, request?: string): Promise<void> {
    if (this.deleted || this.closed || this.covered.has(t) || this.claimed.has(t)) {
      // Dealt with by a record, or being started: no snapshot needs to keep it.
      if (!this.claimed.has(t)) this.liveUnrecorded.delete(t);
      return Promise.resolve();
    }
    this.claimed.add(t);
    if (source === "live") this.liveUnrecorded.add(t);
    return this.serial(async () => {
      try {
        const settings = { overlap: this.settings.overlap, buffered: this.buffered !== undefined };
        const open = (): boolean => !this.closed && !this.deleted;
        const decision = await this.besides(t, (going) => overlapDecision(this.deps.runs, going, this.name, settings, open));
        if (!open()) return;
        if (decision !== "start") return this.tick(t, decision, source, request);
      } catch (e) {
        // The running runs' statuses could not be read, or one could not be ended (a forward cut
        // short, a run's shard moving): the instant is tried again later, not left claimed.
        this.claimed.delete(t);
        this.startFailed(e, () => this.detach(this.instant(t, source)));
        if (report) throw e;
        return;
      }
      const failure = await this.startInstant(t, source, request);
      if (report && failure instanceof StorageError) throw failure;
    });
  }

  /** Starts the instant's run and records it; returns why the start failed (it is tried again later). */
  private async startInstant(t: number, source: ScheduleTickRecord["source"], request?: string): Promise<unknown> {
    const id = scheduleRunId(this.name, t);
    if (this.closed || this.deleted) return undefined;
    if (source === "trigger" && !this.triggering.has(t)) await this.tick(t, "triggering", source, request);
    const again = (): void => this.detach(this.retryStart(t, source));
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
      await startOnce(this.deps.runs, this.settings.workflow, id, this.settings.input, this.shard);
    } catch (e) {
      this.uncount(t);
      this.claimed.delete(t);
      this.doubtful.add(id);
      this.startFailed(e, again);
      return e;
    }
    this.doubtful.delete(id);
    if (this.deleted || this.closed) return undefined;
    this.retries.succeeded();
    await this.tick(t, "started", source);
    this.watch(id);
    return undefined;
  }

  /**
   * Starts instant `t` again after its start failed. A trigger's instant was decided when its
   * `triggering` record was written, maybe by an earlier holder of the shard whose run may exist: it
   * is started, whatever the overlap policy says of the runs now going and though a catch-up since
   * may have covered its time; a live instant is decided again.
   */
  private retryStart(t: number, source: ScheduleTickRecord["source"]): Promise<void> {
    if (source === "buffer") return this.serial(() => this.startBuffered());
    if (source !== "trigger") return this.instant(t, source);
    return this.serial(async () => {
      if (!this.triggering.has(t)) return;
      this.claimed.add(t);
      await this.startInstant(t, source);
    });
  }

  protected override applyTick(r: ScheduleTickRecord): void {
    super.applyTick(r);
    if (r.outcome !== "triggering") this.liveUnrecorded.delete(r.instant);
  }

  /** The whole state as one record, with the live instants whose tick is not recorded yet kept (see `keepUnrecorded`). */
  protected override snapshotRecord(at: number): ScheduleStateRecord {
    return keepUnrecorded(super.snapshotRecord(at), this.liveUnrecorded, this.starting);
  }

  /**
   * Follows a run the schedule started until it ends, then starts the buffered instant if any. A
   * wait that fails says nothing of the run (its process died, the call to it was cut short): its
   * status decides, and while it is going or unknown the run is followed again later.
   */
  protected watch(id: string): void {
    this.detach(
      whenFinished(this.deps.runs, id).then(async () => {
        if (this.closed || this.deleted) return;
        if (!(await hasEnded(this.deps.runs, id).catch(() => false))) return this.retries.wait(WATCH_AGAIN_MS, () => this.watch(id));
        if (this.closed || this.deleted) return;
        this.active.delete(id);
        if (this.buffered !== undefined && this.active.size === 0) await this.serial(() => this.startBuffered());
      }),
    );
  }

  private async startBuffered(): Promise<void> {
    const t = this.buffered;
    if (t === undefined || this.closed || this.deleted) return;
    const going = await this.besides(t, async (runs) => {
      await pruneEnded(this.deps.runs, runs);
      return runs.size;
    });
    if (going === 0 && !this.closed && !this.deleted) await this.startInstant(t, "buffer");
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
        // One page at a time across backfills: a page's record covers its whole span, so a page of
        // another backfill over the same instants must not be recorded while this one's starts,
        // which it stepped over as claimed, may still fail and be dropped.
        const next = this.pageTurn.then(() => this.runPage(b, recurrence));
        this.pageTurn = next.then(
          () => undefined,
          () => undefined,
        );
        const outcome = await next;
        if (outcome === "stopped") return;
        if (outcome !== "recorded") {
          const retry = await new Promise<boolean>((resolve) =>
            this.startFailed(
              outcome.failure,
              () => resolve(true),
              () => resolve(false),
            ),
          );
          if (!retry) return;
          continue;
        }
        await nextTurn();
      }
    } finally {
      first.running = false;
    }
  }

  /** Starts the next page of backfill `b` and records it; a failed start leaves the page to be started again. */
  private async runPage(b: BackfillState, recurrence: Recurrence): Promise<"recorded" | "stopped" | { failure: unknown }> {
    if (this.closed || this.deleted) return "stopped";
    const from = b.next;
    const { instants: page, through } = backfillPage(recurrence, this.covered, this.claimed, { from, to: b.to, spec: b.spec }, PAGE);
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
          await startOnce(this.deps.runs, this.settings.workflow, runId, this.settings.input, this.shard);
          started++;
          this.detach(whenFinished(this.deps.runs, runId).then(() => this.slots.free()));
        } catch (e) {
          this.startedUnrecorded--;
          this.slots.free();
          failure ??= e;
        }
      }),
    );
    if (this.closed || this.deleted) return "stopped";
    // The page's runs count with its record, or, when it is started again, then.
    this.startedUnrecorded -= started;
    for (const t of page) this.claimed.delete(t);
    if (failure !== undefined) return { failure };
    this.retries.succeeded();
    await this.write({ kind: "schedule-backfill-page", at: this.deps.clock.now(), id: b.id, first: from, through, started });
    return "recorded";
  }

  protected override stopTimers(): void {
    super.stopTimers();
    this.timer?.cancel();
    this.timer = undefined;
    this.slots.wakeAll();
  }
}
