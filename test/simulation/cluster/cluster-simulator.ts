/*
 * Runs one schedule of the cluster simulation: two or three engine processes on one PostgreSQL
 * schema, the schedule's calls and faults sent to them in order, and the checks of the reference
 * model once every call has settled and every shard has an owner again.
 *
 * What is deterministic: the schedule (processes, skews, calls, faults, their order and the gaps
 * between them) is a pure function of the seed, and so are the model's answers. What is not: the
 * processes run on the machine's scheduler and the database's, so which process holds which shard
 * when, where in an insert a terminated session or a SIGKILL lands, and which calls overlap differ
 * from run to run. A failing seed is therefore a reproduction that fails often, not always; the
 * trace of the failing run says what happened in it.
 */
import { randomBytes } from "node:crypto";
import { ClusterModel, type ClusterProperty, type Disagreement } from "./cluster-model.js";
import { ClusterProcesses, sleep } from "./cluster-processes.js";
import { dropSchema, fencingBreaches, holders, prepareSchema, terminateSessionsOf } from "./cluster-db.js";
import type { ClusterAction, ClusterSchedule } from "./cluster-schedule.js";
import { actionText } from "./cluster-schedule-text.js";
import { ClientCalls, RETRY_GAP_MS, type Covered, type ScheduleRun } from "./cluster-calls.js";
import { Relays } from "./cluster-relays.js";
import { Families } from "./cluster-children.js";
import { Schedules } from "./cluster-schedules.js";
import { ScheduleOps } from "./cluster-schedule-ops.js";
import { StartsAndEnds } from "./cluster-with-start.js";
import { Batches } from "./cluster-batches.js";
import type { Inspection } from "./wire.js";

/** How long the cluster may take to have an owner for every shard, and to answer a run's inspection, at the end. */
const SETTLE_MS = 25_000;

export interface ClusterReport {
  readonly schedule: ClusterSchedule;
  readonly trace: readonly string[];
  readonly violations: readonly Disagreement[];
  /** The harness itself failed (not a property of the engine): the schedule was not checked to its end. */
  readonly harnessError?: string;
  readonly acknowledged: number;
  readonly inDoubt: number;
  /** Epochs written beyond one per shard: leases that moved to another process (or back) and were written under. */
  readonly takeovers: number;
  /** What the checks covered beyond client calls: messages relays sent, children closed, schedule instants started, terminates, with-start calls, schedule operations, batch runs. */
  readonly covered: Readonly<Record<Covered, number>>;
  readonly ms: number;
}

export interface ClusterRunOptions {
  /** Keep the schema after the run, to look at it. */
  readonly keep?: boolean;
}

/** Runs one schedule and checks the cluster against the model; never throws for a violation. */
export async function runClusterSchedule(schedule: ClusterSchedule, options: ClusterRunOptions = {}): Promise<ClusterReport> {
  const run = new ClusterRun(schedule);
  const began = Date.now();
  let harnessError: string | undefined;
  // The engines run in other processes: a rejection left unhandled here is the harness's own.
  const onUnhandled = (reason: unknown): void => void (harnessError ??= `unhandled: ${(reason as Error)?.stack ?? String(reason)}`);
  process.on("unhandledRejection", onUnhandled);
  try {
    await run.run();
  } catch (e) {
    harnessError = (e as Error)?.stack ?? String(e);
  } finally {
    await run.close(options.keep === true);
    process.off("unhandledRejection", onUnhandled);
  }
  return {
    schedule,
    trace: run.trace,
    violations: run.violations,
    ...(harnessError === undefined ? {} : { harnessError }),
    acknowledged: run.acked,
    inDoubt: run.doubts,
    takeovers: run.takeovers,
    covered: run.covered,
    ms: Date.now() - began,
  };
}

class ClusterRun implements ScheduleRun {
  readonly trace: string[] = [];
  readonly violations: Disagreement[] = [];
  acked = 0;
  doubts = 0;
  takeovers = 0;
  readonly covered: Record<Covered, number> = {
    relayed: 0,
    closed: 0,
    instants: 0,
    terminated: 0,
    withStart: 0,
    scheduleOps: 0,
    batches: 0,
  };
  readonly model: ClusterModel;
  private readonly tag: string;
  readonly schema: string;
  readonly procs: ClusterProcesses;
  private readonly calls = new ClientCalls(this);
  private readonly relays = new Relays(this, this.calls);
  private readonly families = new Families(this, this.calls);
  private readonly schedules = new Schedules(this);
  private readonly scheduleOps = new ScheduleOps(this);
  private readonly startsAndEnds = new StartsAndEnds(this);
  private readonly batches = new Batches(this);
  private readonly chains = new Map<string, Promise<void>>();
  private readonly background: Promise<void>[] = [];
  private readonly began = Date.now();

  constructor(readonly schedule: ClusterSchedule) {
    this.tag = `c${randomBytes(3).toString("hex")}`;
    this.schema = `sim_${this.tag}`;
    this.model = new ClusterModel(schedule.renew);
    this.procs = new ClusterProcesses(schedule, this.schema, this.tag, (l) => this.note(l));
  }

  async run(): Promise<void> {
    await prepareSchema(this.schema, this.schedule.shards, `${this.tag}setup`);
    await this.procs.startAll();
    await this.everyShardHeld();
    for (const [i, action] of this.schedule.actions.entries()) {
      this.note(`#${i} ${actionText(action)}`);
      await this.perform(action);
    }
    await Promise.all(this.background);
    await this.procs.reviveAll();
    await Promise.all(this.chains.values());
    this.note("every call settled");
    if (!(await this.everyShardHeld())) return;
    await this.check();
  }

  async close(keep: boolean): Promise<void> {
    await this.procs.killAll();
    if (!keep) await dropSchema(this.schema).catch(() => undefined);
  }

  note(line: string): void {
    this.trace.push(`${String(Date.now() - this.began).padStart(6)} ms  ${line}`);
  }

  violate(property: ClusterProperty, detail: string): void {
    this.note(`VIOLATION ${property}: ${detail}`);
    this.violations.push({ property, detail });
  }

  async stalled(detail: string): Promise<void> {
    const held = await holders(this.schema).catch((e: unknown) => `unreadable (${String(e)})`);
    this.note(`  leases by shard: ${JSON.stringify(held)}; processes: ${this.procs.states().join(", ")}`);
    for (const h of this.procs.handles()) if (h.errors !== "") this.note(`  ${h.owner} wrote lately: ${h.errors.slice(-800)}`);
    this.violate("live", detail);
  }

  /**
   * Calls on one run go one after the other, so the model knows the order its updates were applied
   * in; a call on several runs (a relay's) waits for the calls before it on each and holds them all.
   */
  private chain(ids: string | readonly string[], work: () => Promise<void>): void {
    const on = typeof ids === "string" ? [ids] : ids;
    const next = Promise.all(on.map((id) => this.chains.get(id)))
      .then(work)
      .catch((e: unknown) => {
        this.violate("live", `the harness failed on ${on.join(", ")}: ${(e as Error)?.stack ?? String(e)}`);
      });
    for (const id of on) this.chains.set(id, next);
  }

  /** Work that goes on while the schedule does (a restart, the end of a pause), awaited before the checks. */
  later(work: Promise<void>): void {
    this.background.push(work.catch((e: unknown) => this.violate("live", `a process could not be started: ${String(e)}`)));
  }

  private async perform(action: ClusterAction): Promise<void> {
    switch (action.a) {
      case "start":
        return this.chain(
          action.id,
          async () => void (await this.calls.start(action.id, action.via, { every: this.schedule.renew[action.id] })),
        );
      case "signal":
        return this.chain(action.id, () => this.calls.signal(action));
      case "update":
        return this.chain(action.id, () => this.calls.update(action.id, action.uid, action.by, action.via));
      case "cancel":
        return this.chain(action.id, () => this.calls.cancel(action));
      case "ownerLost":
        return this.chain(action.id, () => this.calls.ownerLost(action));
      case "dropMidCall":
        return this.chain(action.id, () => this.calls.dropMidCall(action));
      case "reset":
        return this.chain(action.id, () => this.calls.reset(action));
      case "schedule":
        return this.chain(`schedule ${action.name}`, () => this.schedules.schedule(action));
      case "scheduleOps":
        return this.chain(`schedule ${action.name}`, () => this.scheduleOps.scheduleOps(action));
      case "terminate":
        return this.chain(action.id, () => this.startsAndEnds.terminate(action));
      case "withStart":
        return this.chain(action.id, () => this.startsAndEnds.withStart(action));
      case "batch":
        return this.chain(`batch ${action.key}`, () => this.batches.batch(action));
      case "family":
        return this.chain(action.id, () => this.families.family(action));
      case "relay":
        return this.chain(Relays.targets(action), () => this.relays.relay(action));
      case "kill": {
        if (await this.procs.kill(action.slot)) this.later(sleep(action.restartAfterMs).then(() => this.procs.spawn(action.slot)));
        return;
      }
      case "pause": {
        const h = this.procs.at(action.slot);
        if (h === undefined || !h.alive || h.paused) return;
        h.pause();
        this.later(sleep(action.ms).then(() => h.resume()));
        return;
      }
      case "drop":
        this.note(`  ${await terminateSessionsOf(this.procs.at(action.slot)?.owner ?? "")} sessions terminated`);
        return;
      case "gap":
        return sleep(action.ms);
    }
  }

  outcome(what: string, ok: boolean, detail: string): void {
    if (ok) this.acked++;
    else this.doubts++;
    this.note(`  ${what}: ${ok ? "ok" : "in doubt"} ${detail}`);
  }

  /** Waits until every shard has a live owner among the processes running now. */
  private async everyShardHeld(): Promise<boolean> {
    const deadline = Date.now() + SETTLE_MS;
    for (;;) {
      const live = new Set(this.procs.owners());
      const held = await holders(this.schema);
      if (held.every((o) => o !== undefined && live.has(o))) return true;
      if (Date.now() > deadline) {
        await this.stalled(`no live owner for some shards after ${SETTLE_MS} ms: ${JSON.stringify(held)}`);
        return false;
      }
      await sleep(100);
    }
  }

  private async check(): Promise<void> {
    for (const crash of this.procs.crashed) this.violate("live", crash);
    for (const id of this.model.ids()) {
      const seen = await this.inspect(id);
      if (seen === undefined) continue;
      this.note(`  ${id}: ${JSON.stringify(seen)}`);
      for (const d of this.model.compare(id, seen)) this.violate(d.property, d.detail);
    }
    await this.batches.check();
    const { breaches, takeovers } = await fencingBreaches(this.schema);
    for (const breach of breaches) this.violate("fencing", breach);
    this.takeovers = takeovers;
    this.note(`  ${takeovers} takeovers wrote to their shard`);
  }

  /** The run's journal as a live process reads it; asked again while shards move. */
  private async inspect(id: string): Promise<Inspection | null | undefined> {
    const deadline = Date.now() + SETTLE_MS;
    let last: unknown;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const h = this.procs.liveFrom(attempt);
      try {
        return await h.send<Inspection | null>({ op: "inspect", id });
      } catch (e) {
        last = e;
        await sleep(RETRY_GAP_MS);
      }
    }
    await this.stalled(`no process could read ${id} within ${SETTLE_MS} ms: ${String(last)}`);
    return undefined;
  }
}
