/*
 * A schedule worked on from other processes while the holder of its shard is SIGKILLed or stopped
 * past its lease: created every `everyMs` under overlap `skip` or `buffer-one` (catch-up `one`), its
 * runs lasting `holdMs`; triggered, backfilled over instants before its creation and updated to a new
 * interval during its life, then paused, triggered once no run of it goes on, resumed and deleted.
 * Each call is asked of live processes in turn until one acknowledges it.
 *
 * Exact live instants are not computable under these policies (a run that outlasts the interval, or a
 * holder that is down, skips instants), so the checks are these: every run of the schedule is one of
 * an instant of the spec in force (the first interval until the update, the new one from it on,
 * within the clocks' skews and the calls' acknowledgement windows), a backfilled instant, or a
 * trigger's, and no more triggered runs than triggers were sent; no instant has two runs; every
 * instant of the backfill has a run; no two runs but backfilled ones were going at once (from their
 * start and end times, less the clocks' spread); the schedule counts as `started` every run it has;
 * the trigger while paused starts exactly one run; and once deleted the schedule is gone for every
 * process and starts nothing more. The account is judged once it settles.
 */
import { CallFailed, sleep } from "./cluster-processes.js";
import { askAnyLive, RETRY_GAP_MS, RETRY_MS, type ScheduleRun } from "./cluster-calls.js";
import { scheduleRecords } from "./cluster-schedule-records.js";
import { strikeHolder } from "./cluster-schedules.js";
import type { ScheduleOpsAction } from "./cluster-schedule.js";
import type { TockRun, TockSpec } from "./wire.js";

/** How many leases the checks wait at most for the account to settle (a killed holder's shard waits for its lease). */
const SETTLE_LEASES = 8;
/** How many leases after the delete the checks watch for runs it should have stopped (a killed holder's successor takes over). */
const AFTER_DELETE_LEASES = 2;

interface Described {
  readonly started: number;
  readonly skipped: number;
  readonly backfills: readonly unknown[];
  readonly recentRuns: readonly string[];
}

/** A window of the harness's clock in which a grid's instants may have runs. */
interface Window {
  readonly every: number;
  readonly from: number;
  readonly to: number;
}

export class ScheduleOps {
  /** Whether a check of this schedule failed: its records go into the trace before its delete drops them. */
  private failed = false;

  constructor(private readonly run: ScheduleRun) {}

  private violate(detail: string): void {
    this.failed = true;
    this.run.violate("schedules", detail);
  }

  async scheduleOps(a: ScheduleOpsAction): Promise<void> {
    const { name } = a;
    const spec = (everyMs: number): TockSpec => ({ everyMs, overlap: a.overlap, holdMs: a.holdMs });
    const creating = Date.now();
    if (!(await this.call(`schedule ${name}`, { op: "tockSchedule", name, spec: spec(a.everyMs) })).ok) return;
    // Instants and run times are on the machine's clock (less each process's skew): the trace ties them to its own.
    this.run.note(`  ${name} asked for at ${creating} and acknowledged at ${Date.now()} on the machine's clock`);
    const struck = sleep(a.fault.atMs).then(() => strikeHolder(this.run, name, a.fault.kind));
    let updating = Infinity;
    let updated = Infinity;
    let triggers = 0;
    let backfillEvery = a.everyMs;
    // The schedule's life begins at its holder's clock: on a clock behind the machine's, instants of
    // the backfill's span may be live instants the schedule dealt with (a skip is not backfilled).
    const lifeBegins = creating + Math.min(0, ...this.run.schedule.skews);
    const backfill = { from: creating - a.backfill.from, to: Math.min(creating - a.backfill.to, lifeBegins - 1) };
    const ops = [
      { at: a.triggerAtMs, run: async () => void (triggers += (await this.call(`trigger ${name}`, { op: "scheduleTrigger", name })).sent) },
      {
        at: a.backfillAtMs,
        run: async () => {
          // On a clock far enough behind, the whole span lies after the schedule's creation: no backfill then.
          if (backfill.to < backfill.from)
            return this.run.note(`  backfill of ${name}: its span is not before the creation on every clock`);
          // Asked after the update, the backfill starts the new spec's instants.
          if (updated !== Infinity) backfillEvery = a.newEveryMs;
          else if (updating !== Infinity) backfillEvery = NaN;
          await this.call(`backfill ${name}`, { op: "scheduleBackfill", name, ...backfill });
        },
      },
      {
        at: a.updateAtMs,
        run: async () => {
          updating = Date.now();
          await this.call(`update ${name} to every ${a.newEveryMs} ms`, { op: "tockUpdate", name, spec: spec(a.newEveryMs) });
          updated = Date.now();
        },
      },
    ].sort((x, y) => x.at - y.at);
    for (const op of ops) {
      await sleep(creating + op.at - Date.now());
      await op.run();
    }
    await sleep(creating + a.lifeMs - Date.now());
    if (!(await this.call(`pause ${name}`, { op: "schedulePause", name })).ok) return;
    const paused = Date.now();
    await struck;
    const slack = Math.max(0, ...this.run.schedule.skews.map(Math.abs)) + 300;
    const windows: Window[] = [
      { every: a.everyMs, from: creating - slack, to: Math.min(updated, paused) + slack },
      { every: a.newEveryMs, from: updating - slack, to: paused + slack },
    ];
    const settled = await this.settle(name, (runs) => this.backfillMissing(runs, backfill, backfillEvery).length === 0);
    if (settled === undefined) return;
    // Triggers sent during its life whose runs are not there yet may still start theirs.
    const lateTriggers = Math.max(
      0,
      triggers - this.judge(a, settled.runs, settled.described, { windows, backfill, backfillEvery, triggers }),
    );
    const triggered = await this.triggerPaused(a, settled.runs, lateTriggers);
    if (this.failed) await this.noteRecords(name);
    if (triggered !== undefined) await this.deleteAndWatch(a, triggered.runs, triggered.spare, slack);
  }

  /**
   * The trigger of the paused schedule, once no run of it goes on: at least one run, no more than
   * the attempts sent and the triggers of its life whose runs were not there yet (a trigger whose
   * holder died after recording it is started by the next holder, later). Returns the runs after it,
   * and how many more runs those attempts may still start.
   */
  private async triggerPaused(
    a: ScheduleOpsAction,
    before: readonly TockRun[],
    lateTriggers: number,
  ): Promise<{ runs: TockRun[]; spare: number } | undefined> {
    const { ok, sent } = await this.call(`trigger ${a.name} while paused`, { op: "scheduleTrigger", name: a.name });
    const known = new Set(before.map((r) => r.id));
    const settled = await this.settle(a.name, (runs) => !ok || runs.some((r) => !known.has(r.id)));
    if (settled === undefined) return undefined;
    const fresh = settled.runs.filter((r) => !known.has(r.id));
    this.run.note(`  trigger of the paused ${a.name} (${sent} attempts) started ${fresh.map((r) => r.id).join(", ") || "nothing"}`);
    for (const r of fresh) if (r.runId !== 1) this.violate(`${r.id} has ${r.runId} runs`);
    if ((ok && fresh.length === 0) || fresh.length > sent + lateTriggers)
      this.violate(`a trigger of the paused ${a.name}, sent ${sent} times, started ${fresh.length} runs`);
    else if (ok) this.run.covered.scheduleOps++;
    return { runs: settled.runs, spare: Math.max(0, sent + lateTriggers - fresh.length) };
  }

  /**
   * Resumes the schedule, deletes it, and watches it for a few leases (its holder SIGKILLed just
   * after the delete when the action says so): runs since the trigger are the new spec's instants
   * from the resume to the delete, none started after the delete, and every process says the
   * schedule does not exist.
   */
  private async deleteAndWatch(a: ScheduleOpsAction, before: readonly TockRun[], spare: number, slack: number): Promise<void> {
    const { name } = a;
    const resuming = Date.now();
    if (!(await this.call(`resume ${name}`, { op: "scheduleResume", name })).ok) return;
    await sleep(a.newEveryMs);
    if (!(await this.call(`delete ${name}`, { op: "scheduleDelete", name }, "NotFoundError")).ok) return;
    const deleted = Date.now();
    if (a.killAfterDeleteMs !== undefined) {
      await sleep(a.killAfterDeleteMs);
      await strikeHolder(this.run, name, "kill");
    }
    await sleep(AFTER_DELETE_LEASES * this.run.schedule.leaseMs);
    const after = await this.runs();
    if (after === undefined) return;
    const known = new Set(before.map((r) => r.id));
    for (const r of after.filter((r) => !known.has(r.id))) {
      const t = instantOf(r.id);
      const live = t % a.newEveryMs === 0 && t >= resuming - slack && t <= deleted + slack;
      if (!live && spare > 0) {
        spare--;
        this.run.note(`  ${r.id}: a late run of a trigger sent while paused`);
      } else if (!live)
        this.violate(`${name} started ${r.id} after its trigger while paused, not an instant from its resume to its delete`);
      else if (r.startedAt > deleted + slack) this.violate(`${name} started ${r.id} at ${r.startedAt}, after its delete`);
      if (r.runId !== 1) this.violate(`${r.id} has ${r.runId} runs`);
    }
    for (let attempt = 0; attempt < this.run.schedule.engines; attempt++) {
      const h = this.run.procs.liveFrom(attempt);
      try {
        await h.send({ op: "scheduleDescribe", name });
        this.violate(`${h.owner} still describes ${name} after its delete was acknowledged`);
      } catch (e) {
        if (!(e instanceof CallFailed && e.errorName === "NotFoundError"))
          this.run.note(`  describe of the deleted ${name} through ${h.owner}: ${String(e)}`);
      }
    }
    this.run.covered.scheduleOps++;
  }

  /** Compares the settled account with what the calls allow; returns how many runs triggers started. */
  private judge(
    a: ScheduleOpsAction,
    runs: readonly TockRun[],
    described: Described,
    at: { windows: Window[]; backfill: { from: number; to: number }; backfillEvery: number; triggers: number },
  ): number {
    const { name } = a;
    const backfilled = (t: number): boolean =>
      t >= at.backfill.from && t <= at.backfill.to && (t % a.everyMs === 0 || t % a.newEveryMs === 0);
    let triggered = 0;
    for (const r of runs) {
      const t = instantOf(r.id);
      if (r.runId !== 1) this.violate(`instant ${t} of ${name} has ${r.runId} runs`);
      if (backfilled(t) || at.windows.some((w) => t % w.every === 0 && t >= w.from && t <= w.to)) continue;
      if (t % a.everyMs === 0 || t % a.newEveryMs === 0) {
        this.violate(`${name} started ${r.id}, an instant of a spec not in force then (${JSON.stringify(at.windows)})`);
        continue;
      }
      triggered++;
    }
    if (triggered > at.triggers) this.violate(`${name} has ${triggered} runs of triggers; ${at.triggers} were sent`);
    const missing = this.backfillMissing(runs, at.backfill, at.backfillEvery);
    if (missing.length > 0) this.violate(`the backfill of ${name} never started the instants ${missing.join(", ")}`);
    if (described.started !== runs.length) this.violate(`${name} counts ${described.started} started; it has ${runs.length} runs`);
    this.overlaps(
      a,
      runs.filter((r) => !backfilled(instantOf(r.id))),
    );
    this.run.covered.scheduleOps += 2;
    this.run.note(
      `  schedule ${name}: ${runs.length} runs (${triggered} of triggers), ${runs.filter((r) => backfilled(instantOf(r.id))).length} backfilled; ` +
        `it counts ${described.started} started, ${described.skipped} skipped, ${described.backfills.length} backfills under way, ` +
        `recent ${described.recentRuns.join(" ")}; runs (instant: start..end) ` +
        [...runs]
          .sort((x, y) => x.startedAt - y.startedAt)
          .map((r) => `${instantOf(r.id)}: ${r.startedAt}..${r.endedAt ?? "-"}`)
          .join(", "),
    );
    return triggered;
  }

  /**
   * No two of these runs were going at once, as their start and end times say. Each time is on the
   * clock of the process that wrote it, so two runs overlap for sure only when each began before
   * the other ended by more than the spread of the clocks' skews (and 20 ms).
   */
  private overlaps(a: ScheduleOpsAction, runs: readonly TockRun[]): void {
    const skews = this.run.schedule.skews;
    const spread = Math.max(...skews) - Math.min(...skews) + 20;
    const end = (r: TockRun): number => r.endedAt ?? Infinity;
    for (const [i, x] of runs.entries())
      for (const y of runs.slice(i + 1))
        if (x.startedAt < end(y) - spread && y.startedAt < end(x) - spread)
          this.violate(
            `${a.name} (${a.overlap}) ran ${x.id} (${x.startedAt} to ${end(x)}) and ${y.id} (${y.startedAt} to ${end(y)}) at once`,
          );
  }

  /** The backfill's instants that have no run yet (none when its interval is not known: asked while the spec changed). */
  private backfillMissing(runs: readonly TockRun[], backfill: { from: number; to: number }, every: number): number[] {
    if (Number.isNaN(every)) return [];
    const have = new Set(runs.map((r) => instantOf(r.id)));
    const missing: number[] = [];
    for (let t = Math.ceil(backfill.from / every) * every; t <= backfill.to; t += every) if (!have.has(t)) missing.push(t);
    return missing;
  }

  /**
   * Waits until the account settles: no backfill under way, no run of the schedule going on, every
   * run counted, and `done` says so of the runs; judged as it stands once the wait runs out.
   */
  private async settle(
    name: string,
    done: (runs: readonly TockRun[]) => boolean,
  ): Promise<{ runs: TockRun[]; described: Described } | undefined> {
    const deadline = Date.now() + SETTLE_LEASES * this.run.schedule.leaseMs;
    // The account must read the same a lease apart: a count can equal a listing that misses a run
    // and holds one the schedule left out, while shards move.
    let candidate: string | undefined;
    for (;;) {
      const runs = await this.runs();
      const described = await askAnyLive<Described>(this.run, { op: "scheduleDescribe", name });
      if (runs === undefined || described === undefined) return undefined;
      const going = runs.some((r) => r.endedAt === undefined);
      const settled = !going && described.backfills.length === 0 && described.started === runs.length && done(runs);
      const seen = JSON.stringify([described.started, runs.map((r) => r.id).sort()]);
      if ((settled && seen === candidate) || Date.now() > deadline) return { runs, described };
      candidate = settled ? seen : undefined;
      await sleep(settled ? this.run.schedule.leaseMs : RETRY_GAP_MS);
    }
  }

  /** The schedule's records, into the trace. */
  private async noteRecords(name: string): Promise<void> {
    try {
      const lines = await scheduleRecords(this.run.schema, this.run.schedule.shards, name);
      this.run.note(`  records of ${name} (generation.position kind fields):`);
      for (const line of lines) this.run.note(`    ${line}`);
    } catch (e) {
      this.run.note(`  records of ${name} could not be read: ${String(e)}`);
    }
  }

  /** Every run of the schedule with operations (the only schedule starting its workflow type). */
  private runs(): Promise<TockRun[] | undefined> {
    return askAnyLive<TockRun[]>(this.run, { op: "tocks" });
  }

  /**
   * Asks live processes in turn until one acknowledges the call; says whether one did and how many
   * attempts were sent (each may have been performed). An error named `done` on a later attempt
   * means an earlier one was performed.
   */
  private async call(what: string, command: Record<string, unknown>, done?: string): Promise<{ ok: boolean; sent: number }> {
    const deadline = Date.now() + RETRY_MS;
    let attempt = 0;
    for (; Date.now() < deadline; attempt++) {
      const h = this.run.procs.liveFrom(attempt);
      try {
        await h.send(command);
        this.run.outcome(what, true, `through ${h.owner}${attempt > 0 ? ` (attempt ${attempt + 1})` : ""}`);
        return { ok: true, sent: attempt + 1 };
      } catch (e) {
        if (attempt > 0 && e instanceof CallFailed && e.errorName === done) {
          this.run.outcome(what, true, `(an earlier attempt did it; ${h.owner})`);
          return { ok: true, sent: attempt + 1 };
        }
        this.run.note(`  ${what} through ${h.owner}: ${String(e)}`);
        await sleep(RETRY_GAP_MS);
      }
    }
    this.run.outcome(what, false, "no process acknowledged it");
    return { ok: false, sent: attempt };
  }
}

/** The instant in a schedule's run ID, `<name>@<instant>`. */
function instantOf(id: string): number {
  return Number(id.slice(id.lastIndexOf("@") + 1));
}
