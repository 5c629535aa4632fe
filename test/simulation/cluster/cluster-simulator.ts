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
import { CallFailed, ClusterProcesses, sleep } from "./cluster-processes.js";
import { dropSchema, fencingBreaches, holders, prepareSchema, terminateSessionsOf } from "./cluster-db.js";
import { actionText, type ClusterAction, type ClusterSchedule, type Via } from "./cluster-schedule.js";
import type { Bumped, Inspection } from "./wire.js";

/** How long a start or an update is asked again (with the same ID) before it stays in doubt. */
const RETRY_MS = 15_000;
const RETRY_GAP_MS = 150;
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
    ms: Date.now() - began,
  };
}

class ClusterRun {
  readonly trace: string[] = [];
  readonly violations: Disagreement[] = [];
  acked = 0;
  doubts = 0;
  takeovers = 0;
  private readonly model = new ClusterModel();
  private readonly tag: string;
  private readonly schema: string;
  private readonly procs: ClusterProcesses;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly background: Promise<void>[] = [];
  private readonly began = Date.now();

  constructor(private readonly schedule: ClusterSchedule) {
    this.tag = `c${randomBytes(3).toString("hex")}`;
    this.schema = `sim_${this.tag}`;
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

  private note(line: string): void {
    this.trace.push(`${String(Date.now() - this.began).padStart(6)} ms  ${line}`);
  }

  private violate(property: ClusterProperty, detail: string): void {
    this.note(`VIOLATION ${property}: ${detail}`);
    this.violations.push({ property, detail });
  }

  /** Calls on one run go one after the other, so the model knows the order its updates were applied in. */
  private chain(id: string, work: () => Promise<void>): void {
    const next = (this.chains.get(id) ?? Promise.resolve()).then(work).catch((e: unknown) => {
      this.violate("live", `the harness failed on ${id}: ${(e as Error)?.stack ?? String(e)}`);
    });
    this.chains.set(id, next);
  }

  /** Work that goes on while the schedule does (a restart, the end of a pause), awaited before the checks. */
  private later(work: Promise<void>): void {
    this.background.push(work.catch((e: unknown) => this.violate("live", `a process could not be started: ${String(e)}`)));
  }

  private async perform(action: ClusterAction): Promise<void> {
    switch (action.a) {
      case "start":
        return this.chain(action.id, () => this.start(action));
      case "signal":
        return this.chain(action.id, () => this.signal(action));
      case "update":
        return this.chain(action.id, () => this.update(action.id, action.uid, action.by, action.via));
      case "cancel":
        return this.chain(action.id, () => this.cancel(action));
      case "ownerLost":
        return this.chain(action.id, () => this.ownerLost(action));
      case "dropMidCall":
        return this.chain(action.id, () => this.dropMidCall(action));
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

  private outcome(what: string, ok: boolean, detail: string): void {
    if (ok) this.acked++;
    else this.doubts++;
    this.note(`  ${what}: ${ok ? "ok" : "in doubt"} ${detail}`);
  }

  private async start(a: Extract<ClusterAction, { a: "start" }>): Promise<void> {
    const deadline = Date.now() + RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      const h = await this.procs.route(a.via, a.id, attempt);
      try {
        await h.send({ op: "start", id: a.id });
        this.model.started(a.id, "acked");
        return this.outcome(`start ${a.id}`, true, `by ${h.owner}`);
      } catch (e) {
        // Only this harness starts the ID: an earlier attempt that seemed lost did start it.
        if (e instanceof CallFailed && e.errorName === "AlreadyExistsError") {
          if (attempt === 0) return this.violate("exactlyOnce", `the first start of ${a.id} was refused: ${e.message}`);
          this.model.started(a.id, "acked");
          return this.outcome(`start ${a.id}`, true, `(an earlier attempt started it; ${h.owner})`);
        }
        if (Date.now() > deadline) {
          this.model.started(a.id, "doubt");
          return this.outcome(`start ${a.id}`, false, String(e));
        }
        await sleep(RETRY_GAP_MS);
      }
    }
  }

  private async signal(a: Extract<ClusterAction, { a: "signal" }>): Promise<void> {
    const h = await this.procs.route(a.via, a.id);
    try {
      await h.send({ op: "signal", id: a.id, tag: a.tag });
      this.model.signal(a.id, a.tag, "acked");
      this.outcome(`signal ${a.tag}`, true, `through ${h.owner}`);
    } catch (e) {
      // Signals carry no ID a caller could send again with; one that failed may still have been applied.
      this.model.signal(a.id, a.tag, "doubt");
      this.outcome(`signal ${a.tag}`, false, `through ${h.owner}: ${String(e)}`);
    }
  }

  /** Asks for the update until it is answered, with the same ID each time, as a careful client does. */
  private async update(id: string, uid: string, by: number, via: Via): Promise<void> {
    const deadline = Date.now() + RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      const h = await this.procs.route(via, id, attempt);
      try {
        const answer = await h.send<Bumped>({ op: "update", id, uid, by });
        const wrong = this.model.updated(id, uid, by, answer);
        this.outcome(
          `update ${uid}`,
          true,
          `= ${JSON.stringify(answer)} through ${h.owner}${attempt > 0 ? ` (attempt ${attempt + 1})` : ""}`,
        );
        if (wrong !== undefined) this.violate(wrong.property, wrong.detail);
        return;
      } catch (e) {
        if (Date.now() > deadline) {
          this.model.updateInDoubt(id, uid, by);
          return this.outcome(`update ${uid}`, false, String(e));
        }
        await sleep(RETRY_GAP_MS);
      }
    }
  }

  private async cancel(a: Extract<ClusterAction, { a: "cancel" }>): Promise<void> {
    const h = await this.procs.route(a.via, a.id);
    try {
      await h.send({ op: "cancel", id: a.id });
      this.model.cancel(a.id, "acked");
      this.outcome(`cancel ${a.id}`, true, `through ${h.owner}`);
    } catch (e) {
      this.model.cancel(a.id, "doubt");
      this.outcome(`cancel ${a.id}`, false, `through ${h.owner}: ${String(e)}`);
    }
  }

  /** Signals and an update from a non-owner while the owner is SIGKILLed around them. */
  private async ownerLost(a: Extract<ClusterAction, { a: "ownerLost" }>): Promise<void> {
    const owner = await this.procs.ownerOf(a.id);
    const caller = await this.procs.route({ route: "other", slot: 0 }, a.id);
    if (owner === undefined || this.procs.at(owner) === caller) {
      this.note(`  no owner of ${a.id} to lose; the calls go alone`);
    }
    const kill = async (): Promise<void> => {
      if (owner === undefined || this.procs.at(owner) === caller) return;
      if (await this.procs.kill(owner)) this.later(this.procs.spawn(owner));
    };
    let killed: Promise<void> | undefined;
    if (a.killAtMs < 0) {
      killed = kill();
      await sleep(-a.killAtMs);
    } else killed = sleep(a.killAtMs).then(kill);
    const signals = a.tags.map((tag) => caller.send({ op: "signal", id: a.id, tag }));
    const bumped = answerOf(caller.send<Bumped>({ op: "update", id: a.id, uid: a.uid, by: a.by }));
    await this.settleBurst(a.id, a.tags, signals, caller.owner);
    await killed;
    await this.settleUpdate(a.id, a.uid, a.by, bumped, caller.owner);
  }

  /** Signals and an update sent to the run's owner while its database sessions are cut off. */
  private async dropMidCall(a: Extract<ClusterAction, { a: "dropMidCall" }>): Promise<void> {
    const owner = await this.procs.route({ route: "owner", slot: 0 }, a.id);
    const dropped = sleep(a.atMs).then(async () =>
      this.note(`  ${await terminateSessionsOf(owner.owner)} sessions of ${owner.owner} terminated`),
    );
    const signals = a.tags.map((tag) => owner.send({ op: "signal", id: a.id, tag }));
    const bumped = answerOf(owner.send<Bumped>({ op: "update", id: a.id, uid: a.uid, by: a.by }));
    await this.settleBurst(a.id, a.tags, signals, owner.owner);
    await dropped;
    await this.settleUpdate(a.id, a.uid, a.by, bumped, owner.owner);
  }

  /** Notes the outcome of signals sent together. */
  private async settleBurst(id: string, tags: readonly string[], signals: Promise<unknown>[], through: string): Promise<void> {
    const settled = await Promise.allSettled(signals);
    settled.forEach((s, i) => {
      const tag = tags[i]!;
      this.model.signal(id, tag, s.status === "fulfilled" ? "acked" : "doubt");
      this.outcome(
        `signal ${tag}`,
        s.status === "fulfilled",
        `through ${through}${s.status === "rejected" ? `: ${String(s.reason)}` : ""}`,
      );
    });
  }

  /** Notes an update's answer, or asks for it again (same ID) until it is answered. */
  private async settleUpdate(id: string, uid: string, by: number, bumped: Promise<Bumped | undefined>, through: string): Promise<void> {
    const answer = await bumped;
    if (answer === undefined) return this.update(id, uid, by, { route: "other", slot: 0 });
    const wrong = this.model.updated(id, uid, by, answer);
    this.outcome(`update ${uid}`, true, `= ${JSON.stringify(answer)} through ${through}`);
    if (wrong !== undefined) this.violate(wrong.property, wrong.detail);
  }

  /** Waits until every shard has a live owner among the processes running now. */
  private async everyShardHeld(): Promise<boolean> {
    const deadline = Date.now() + SETTLE_MS;
    for (;;) {
      const live = new Set(this.procs.owners());
      const held = await holders(this.schema);
      if (held.every((o) => o !== undefined && live.has(o))) return true;
      if (Date.now() > deadline) {
        this.violate("live", `no live owner for some shards after ${SETTLE_MS} ms: ${JSON.stringify(held)}`);
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
    this.violate("live", `no process could read ${id} within ${SETTLE_MS} ms: ${String(last)}`);
    return undefined;
  }
}

/** The answer of an update sent alongside other calls, or undefined when it failed (handled at once, as it may fail before it is awaited). */
function answerOf(sent: Promise<Bumped>): Promise<Bumped | undefined> {
  return sent.then(
    (v) => v,
    () => undefined,
  );
}
