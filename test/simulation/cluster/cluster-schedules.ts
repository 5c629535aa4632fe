/*
 * Schedules across processes: a schedule (`every`, `overlap: "allow-all"`, `catchUp: "all"`) runs
 * while the process holding its shard is SIGKILLed or paused past its lease, then is paused. The
 * model computes the instants itself, the multiples of the interval between the schedule's creation
 * and its pause: each must have started once (a run of ID `<name>@<instant>` with one run), none
 * twice, and the schedule's own count must agree. Instants closer to either end than the clocks'
 * skews and an interval, or between a call and its acknowledgement, are not required, only allowed.
 * Instants due before the pause that no holder started yet are caught up by a later one.
 */
import type * as Ids from "../../../packages/runtime/src/core/ids.js";
import { sleep } from "./cluster-processes.js";
import { askAnyLive, RETRY_GAP_MS, RETRY_MS, type ScheduleRun } from "./cluster-calls.js";
import { holders } from "./cluster-db.js";
import type { ClusterAction } from "./cluster-schedule.js";

// The shard of a schedule is the runtime's own business: read from its build output, whose place
// relative to this file's differs between the source and the build.
const { SYSTEM_STREAM_PREFIX, shardOf } = (await import(
  new URL("../../../../packages/runtime/dist/src/core/ids.js", import.meta.url).href
)) as typeof Ids;

type ScheduleAction = Extract<ClusterAction, { a: "schedule" }>;

/** What the checks read of a schedule's description. */
interface Described {
  readonly started: number;
  readonly skipped: number;
  readonly backfills: readonly unknown[];
  readonly lastError?: string;
}

/** How long after a pause the checks wait for starts already under way to land. */
const LAND_MS = 1_000;

/**
 * How many leases the checks wait at most for the account to settle: a pause's writer killed before
 * it caught up leaves the catch-up to the next holder, after its lease runs out and it recovers.
 */
const SETTLE_LEASES = 6;

/**
 * The shard of a schedule's or a key's stream, and the slot of the live process whose lease the
 * lease table names for it now (none when the holder died with its lease still running).
 */
export async function flowHolder(
  run: ScheduleRun,
  family: "schedule" | "batch",
  name: string,
): Promise<{ shard: number; slot: number | undefined }> {
  const { procs, schedule, schema } = run;
  const shard = shardOf(`${SYSTEM_STREAM_PREFIX}${family}/${name}`, schedule.shards);
  const holder = (await holders(schema))[shard];
  const slot = Array.from({ length: schedule.engines }, (_, s) => s).find(
    (s) => holder !== undefined && procs.at(s)?.owner === holder && procs.at(s)?.alive === true,
  );
  return { shard, slot };
}

/** SIGKILLs the process holding the schedule's shard, or stops it for twice its lease. */
export async function strikeHolder(run: ScheduleRun, name: string, kind: "kill" | "pause" | "none"): Promise<void> {
  if (kind === "none") return;
  const { procs, schedule } = run;
  const { shard, slot } = await flowHolder(run, "schedule", name);
  if (slot === undefined) return run.note(`  schedule ${name}: its shard ${shard} has no live owner to strike`);
  if (kind === "kill") {
    if (await procs.kill(slot)) run.later(procs.spawn(slot));
    return;
  }
  const h = procs.at(slot)!;
  if (h.paused) return;
  h.pause();
  run.note(`  ${h.owner}, holding schedule ${name}, stopped for ${schedule.leaseMs * 2} ms`);
  run.later(sleep(schedule.leaseMs * 2).then(() => h.resume()));
}

export class Schedules {
  constructor(private readonly run: ScheduleRun) {}

  async schedule(a: ScheduleAction): Promise<void> {
    const creating = Date.now();
    if (!(await this.call(`schedule ${a.name}`, { op: "schedule", name: a.name, everyMs: a.everyMs }))) return;
    const created = Date.now();
    await sleep(a.fault.atMs);
    await strikeHolder(this.run, a.name, a.fault.kind);
    await sleep(Math.max(0, creating + a.lifeMs - Date.now()));
    const pausing = Date.now();
    if (!(await this.call(`pause ${a.name}`, { op: "schedulePause", name: a.name }))) return;
    const paused = Date.now();
    await sleep(LAND_MS);
    await this.check(a, { creating, created, pausing, paused });
  }

  /** Asks live processes in turn until one acknowledges the call. */
  private async call(what: string, command: Record<string, unknown>): Promise<boolean> {
    const deadline = Date.now() + RETRY_MS;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const h = this.run.procs.liveFrom(attempt);
      try {
        await h.send(command);
        this.run.outcome(what, true, `through ${h.owner}`);
        return true;
      } catch {
        await sleep(RETRY_GAP_MS);
      }
    }
    this.run.outcome(what, false, "no process acknowledged it");
    return false;
  }

  /**
   * Instants from the creation's acknowledgement to the pause's request must have started; from the
   * creation's request to the pause's acknowledgement they may have. Instants missed while the
   * schedule's shard had no live holder are caught up by its next holder, which may take over after
   * the pause: the checks wait for that (bounded by a few leases) before they judge.
   */
  private async check(a: ScheduleAction, at: { creating: number; created: number; pausing: number; paused: number }): Promise<void> {
    const deadline = Date.now() + SETTLE_LEASES * this.run.schedule.leaseMs;
    for (;;) {
      const seen = await this.observe(a, at);
      if (seen === undefined) return;
      const settled = seen.missing.length === 0 && seen.described.backfills.length === 0 && seen.described.started === seen.started.length;
      if (!settled && Date.now() < deadline) {
        await sleep(RETRY_GAP_MS);
        continue;
      }
      const { started, missing, twice, described } = seen;
      for (const [instant, runId] of twice)
        this.run.violate("schedules", `instant ${instant} of ${a.name} started ${runId} runs of ${a.name}@${instant}`);
      if (missing.length > 0)
        this.run.violate("schedules", `${a.name} never started the instants ${missing.join(", ")} (every ${a.everyMs} ms)`);
      this.run.covered.instants += started.length;
      this.run.note(
        `  schedule ${a.name}: ${started.length} instants started from ${started[0] ?? "-"} to ${started.at(-1) ?? "-"}; it counts ${described.started} started, ${described.skipped} skipped`,
      );
      if (described.started !== started.length || described.skipped !== 0)
        this.run.violate(
          "schedules",
          `${a.name} counts ${described.started} started and ${described.skipped} skipped; ${started.length} instants have runs`,
        );
      return;
    }
  }

  /** The instants that have runs, those required that have none, those started twice, and the schedule's own account. */
  private async observe(
    a: ScheduleAction,
    at: { creating: number; created: number; pausing: number; paused: number },
  ): Promise<{ started: number[]; missing: number[]; twice: [number, number][]; described: Described } | undefined> {
    const { created, pausing } = at;
    const slack = Math.max(0, ...this.run.schedule.skews.map(Math.abs)) + a.everyMs + 300;
    const first = Math.ceil((at.creating - slack) / a.everyMs) * a.everyMs;
    const started: number[] = [];
    const missing: number[] = [];
    const twice: [number, number][] = [];
    for (let instant = first; instant <= at.paused + slack; instant += a.everyMs) {
      const runId = await askAnyLive<number | null>(this.run, { op: "runId", id: `${a.name}@${instant}` });
      if (runId === undefined) return undefined;
      if (runId !== null) started.push(instant);
      if (runId !== null && runId !== 1) twice.push([instant, runId]);
      const required = instant >= created + slack && instant <= pausing - slack;
      if (required && runId === null) missing.push(instant);
    }
    const described = await askAnyLive<Described>(this.run, { op: "scheduleDescribe", name: a.name });
    return described === undefined ? undefined : { started, missing, twice, described };
  }
}
