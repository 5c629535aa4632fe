import { scheduleRunId } from "../journal/schedule-state.js";
import { ScheduleCore } from "./schedule-core.js";

/** How long the run of an instant an earlier holder may have asked for is looked for, and the delay before the first look (doubling after). */
const UNSURE_MS = 60_000;
const UNSURE_LOOK_MS = 1_000;
/** The instants after a recovered cursor whose runs are looked for when a schedule opens. */
const ADOPT_WINDOW = 8;

/**
 * What a holder of a schedule's shard finds, as it opens the schedule, of the runs the holder before
 * it started without a record saying so: it counts those it finds, takes those it cannot read for
 * going, and looks again, for a while, for those whose start may yet land.
 */
export abstract class ScheduleAdoption extends ScheduleCore {
  /** Follows a run the schedule counts until it ends (see `ScheduleRuntime`). */
  protected abstract watch(id: string): void;

  /**
   * Looks for the runs of the first instants from `recovered` (the one after the recovered cursor)
   * due by `openedAt`: the stopped holder's last records may all be lost, a start among them. Goes
   * on looking for the instants an earlier holder left unsure.
   */
  protected async adoptRecovered(recovered: number | undefined, openedAt: number): Promise<void> {
    for (const t of [...this.unsure.keys()]) this.followUnsure(t, 0);
    const maybeStarted: number[] = [];
    for (let t = recovered; t !== undefined && maybeStarted.length < ADOPT_WINDOW; t = this.recurrence.next(t)) {
      if (maybeStarted.length > 0 && t > openedAt) break;
      maybeStarted.push(t);
    }
    await Promise.all(maybeStarted.map((t) => this.adoptUnrecorded(t)));
  }

  /**
   * A crash between an instant's start and its record leaves the run without the record: an instant
   * after the recovered cursor may have a run. It is the schedule's, and it counts as running
   * for the overlap policy; otherwise a missed-instant policy that skips it would start another run
   * beside it.
   */
  private async adoptUnrecorded(t: number | undefined): Promise<void> {
    // A backfill under way that holds the instant counts its run with its page.
    if (t === undefined || this.covered.has(t) || this.claimed.has(t)) return;
    this.unsure.set(t, this.deps.clock.now() + UNSURE_MS);
    const exists = await this.runExists(t);
    if (exists === true) await this.adoptFound(t);
    // Whether its run exists is not known (its shard moving): the overlap policy takes it for going
    // until a read of its status says otherwise, as it does a run recovered as running.
    else if (exists === undefined && !this.closed && !this.deleted) this.active.add(scheduleRunId(this.name, t));
    this.followUnsure(t, 0);
  }

  /**
   * The holder that stopped may have asked for the instant's run just before, and the start be
   * performed only later (its request waited for the run's shard to get an owner): the run then
   * appears after the catch-up dealt with the instant. It is looked for until the time the instant
   * is unsure to, by this holder and the next ones (the catch-up's skip record carries it), and
   * counted when found; a start or a backfill page of the instant recorded meanwhile ends the search.
   */
  private followUnsure(t: number, looks: number): void {
    const until = this.unsure.get(t);
    if (until === undefined) return;
    const now = this.deps.clock.now();
    if (now >= until) return void this.unsure.delete(t);
    this.retries.wait(Math.min(UNSURE_LOOK_MS * 2 ** looks, until - now), () =>
      this.detach(
        (async () => {
          if (!this.unsure.has(t) || this.closed || this.deleted) return;
          // A read that failed is looked at again, as one that found nothing.
          if ((await this.runExists(t)) === true) {
            await this.serial(() => this.adoptFound(t));
            if (!this.unsure.has(t)) this.watch(scheduleRunId(this.name, t));
          }
          this.followUnsure(t, looks + 1);
        })(),
      ),
    );
  }

  /** Whether instant `t` has a run; `undefined` when its status could not be read (its shard moving). */
  private runExists(t: number): Promise<boolean | undefined> {
    return this.deps.runs.status(scheduleRunId(this.name, t)).then(
      (s) => s !== undefined,
      () => undefined,
    );
  }

  /** Counts the found run of instant `t`, unless a record counted it meanwhile or a start of it is under way. */
  private async adoptFound(t: number): Promise<void> {
    // Whatever the pause and this process's clock say now: the run exists, so an engine started it.
    if (!this.unsure.has(t) || this.closed || this.deleted || this.claimed.has(t)) return;
    await this.tick(t, "started", "live");
  }

  /** A catch-up's skip of `[from, to]`, carrying the instants of the span whose run may yet appear. */
  protected skip(at: number, from: number, to: number, count: number): Promise<void> {
    const unsure = [...this.unsure].filter(([t]) => from <= t && t <= to).map(([instant, until]) => ({ instant, until }));
    return this.write({ kind: "schedule-skip", at, from, to, count, ...(unsure.length > 0 ? { unsure } : {}) });
  }
}
