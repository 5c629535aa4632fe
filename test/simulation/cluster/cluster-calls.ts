/*
 * The client calls of the cluster simulation (start, signal, update, cancel, and the bursts sent
 * while a fault strikes), each noted in the model with its outcome: acknowledged, or in doubt when
 * its process died or it failed in a way that does not say whether it happened.
 */
import type { ClusterModel, ClusterProperty } from "./cluster-model.js";
import { CallFailed, type ClusterProcesses, sleep } from "./cluster-processes.js";
import { terminateSessionsOf } from "./cluster-db.js";
import type { ClusterAction, ClusterSchedule, Via } from "./cluster-schedule.js";
import type { Bumped, Family, Relayed } from "./wire.js";

/** How long a start or an update is asked again (with the same ID) before it stays in doubt. */
export const RETRY_MS = 15_000;
export const RETRY_GAP_MS = 150;

/** What the jobs of one schedule's run share: its processes, its model and its trace. */
export interface ScheduleRun {
  readonly schedule: ClusterSchedule;
  readonly schema: string;
  readonly procs: ClusterProcesses;
  readonly model: ClusterModel;
  note(line: string): void;
  violate(property: ClusterProperty, detail: string): void;
  /** A liveness violation, noted with who held each shard and which processes were up, to diagnose it by. */
  stalled(detail: string): Promise<void>;
  /** Counts and notes a call's outcome. */
  outcome(what: string, ok: boolean, detail: string): void;
  /** Work that goes on while the schedule does, awaited before the checks. */
  later(work: Promise<void>): void;
  /** Counts of what the checks covered, so a test can tell they had something to check. */
  readonly covered: Record<Covered, number>;
}

/** A question any live process answers; undefined (and a liveness violation) when none does in time. */
export async function askAnyLive<T>(run: ScheduleRun, command: Record<string, unknown>): Promise<T | undefined> {
  const deadline = Date.now() + RETRY_MS;
  let last: unknown;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    try {
      return await run.procs.liveFrom(attempt).send<T>(command);
    } catch (e) {
      last = e;
      await sleep(RETRY_GAP_MS);
    }
  }
  await run.stalled(`no process answered ${JSON.stringify(command)}: ${String(last)}`);
  return undefined;
}

/**
 * What the checks covered beyond client calls; `scheduleOps` counts the judged operations on a
 * schedule from other processes, `batches` the batch runs whose events were judged.
 */
export type Covered = "relayed" | "closed" | "instants" | "terminated" | "withStart" | "scheduleOps" | "batches";

export class ClientCalls {
  constructor(private readonly run: ScheduleRun) {}

  /**
   * Starts `id` (a relay with its plan, or a run of the model), asking again until it is answered;
   * true once it is acknowledged.
   */
  async start(
    id: string,
    via: Via,
    input: { readonly relay?: readonly Relayed[]; readonly family?: Family; readonly every?: number } = {},
  ): Promise<boolean> {
    // Relays and parents are not runs of the model.
    const modelled = input.relay === undefined && input.family === undefined;
    const deadline = Date.now() + RETRY_MS;
    const started = (): true => {
      if (modelled) this.run.model.started(id, "acked");
      return true;
    };
    for (let attempt = 0; ; attempt++) {
      const h = await this.run.procs.route(via, id, attempt);
      try {
        await h.send({ op: "start", id, ...input });
        this.run.outcome(`start ${id}`, true, `by ${h.owner}`);
        return started();
      } catch (e) {
        // Only this harness starts the ID: an earlier attempt that seemed lost did start it.
        if (e instanceof CallFailed && e.errorName === "AlreadyExistsError") {
          if (attempt === 0) {
            this.run.violate("exactlyOnce", `the first start of ${id} was refused: ${e.message}`);
            return false;
          }
          this.run.outcome(`start ${id}`, true, `(an earlier attempt started it; ${h.owner})`);
          return started();
        }
        if (Date.now() > deadline) {
          if (modelled) this.run.model.started(id, "doubt");
          this.run.outcome(`start ${id}`, false, String(e));
          return false;
        }
        await sleep(RETRY_GAP_MS);
      }
    }
  }

  async signal(a: Extract<ClusterAction, { a: "signal" }>): Promise<void> {
    const h = await this.run.procs.route(a.via, a.id);
    try {
      await h.send({ op: "signal", id: a.id, tag: a.tag });
      this.run.model.signal(a.id, a.tag, "acked");
      this.run.outcome(`signal ${a.tag}`, true, `through ${h.owner}`);
    } catch (e) {
      // Signals carry no ID a caller could send again with; one that failed may still have been applied.
      this.run.model.signal(a.id, a.tag, "doubt");
      this.run.outcome(`signal ${a.tag}`, false, `through ${h.owner}: ${String(e)}`);
    }
  }

  /** Asks for the update until it is answered, with the same ID each time, as a careful client does. */
  async update(id: string, uid: string, by: number, via: Via): Promise<void> {
    const deadline = Date.now() + RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      const h = await this.run.procs.route(via, id, attempt);
      try {
        const answer = await h.send<Bumped>({ op: "update", id, uid, by });
        const wrong = this.run.model.updated(id, uid, by, answer);
        this.run.outcome(
          `update ${uid}`,
          true,
          `= ${JSON.stringify(answer)} through ${h.owner}${attempt > 0 ? ` (attempt ${attempt + 1})` : ""}`,
        );
        if (wrong !== undefined) this.run.violate(wrong.property, wrong.detail);
        return;
      } catch (e) {
        if (Date.now() > deadline) {
          this.run.model.updateInDoubt(id, uid, by);
          return this.run.outcome(`update ${uid}`, false, String(e));
        }
        await sleep(RETRY_GAP_MS);
      }
    }
  }

  async cancel(a: Extract<ClusterAction, { a: "cancel" }>): Promise<void> {
    const h = await this.run.procs.route(a.via, a.id);
    try {
      await h.send({ op: "cancel", id: a.id });
      this.run.model.cancel(a.id, "acked");
      this.run.outcome(`cancel ${a.id}`, true, `through ${h.owner}`);
    } catch (e) {
      this.run.model.cancel(a.id, "doubt");
      this.run.outcome(`cancel ${a.id}`, false, `through ${h.owner}: ${String(e)}`);
    }
  }

  /** Signals and an update from a non-owner while the owner is SIGKILLed around them. */
  async ownerLost(a: Extract<ClusterAction, { a: "ownerLost" }>): Promise<void> {
    const owner = await this.run.procs.ownerOf(a.id);
    const caller = await this.run.procs.route({ route: "other", slot: 0 }, a.id);
    if (owner === undefined || this.run.procs.at(owner) === caller) {
      this.run.note(`  no owner of ${a.id} to lose; the calls go alone`);
    }
    const kill = async (): Promise<void> => {
      if (owner === undefined || this.run.procs.at(owner) === caller) return;
      if (await this.run.procs.kill(owner)) this.run.later(this.run.procs.spawn(owner));
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

  /**
   * A reset through a non-owner (forwarded to the run's owner) while signals and an update to the
   * run are in flight: the new run applies again every message the old one had after its first
   * step, so the model's messages and answers stand; only the run count may grow.
   */
  async reset(a: Extract<ClusterAction, { a: "reset" }>): Promise<void> {
    const caller = await this.run.procs.route({ route: "other", slot: a.slot }, a.id);
    const send = (tag: string): Promise<unknown> => {
      const sent = caller.send({ op: "signal", id: a.id, tag });
      // Settled only after the reset's answer: one that fails meanwhile is not an unhandled rejection.
      sent.catch(() => undefined);
      return sent;
    };
    const before = a.tags.slice(0, a.before).map(send);
    this.run.model.reset(a.id);
    const reset = caller.send({ op: "reset", id: a.id }).then(
      () => "ok",
      (e: unknown) => (e instanceof CallFailed && e.errorName === "RejectedError" ? `refused: ${e.message}` : `in doubt: ${String(e)}`),
    );
    const after = a.tags.slice(a.before).map(send);
    const bumped = answerOf(caller.send<Bumped>({ op: "update", id: a.id, uid: a.uid, by: a.by }));
    await this.run.note(`  reset ${a.id} through ${caller.owner}: ${await reset}`);
    await this.settleBurst(a.id, a.tags, [...before, ...after], caller.owner);
    await this.settleUpdate(a.id, a.uid, a.by, bumped, caller.owner);
  }

  /** Signals and an update sent to the run's owner while its database sessions are cut off. */
  async dropMidCall(a: Extract<ClusterAction, { a: "dropMidCall" }>): Promise<void> {
    const owner = await this.run.procs.route({ route: "owner", slot: 0 }, a.id);
    const dropped = sleep(a.atMs).then(async () =>
      this.run.note(`  ${await terminateSessionsOf(owner.owner)} sessions of ${owner.owner} terminated`),
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
      this.run.model.signal(id, tag, s.status === "fulfilled" ? "acked" : "doubt");
      this.run.outcome(
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
    const wrong = this.run.model.updated(id, uid, by, answer);
    this.run.outcome(`update ${uid}`, true, `= ${JSON.stringify(answer)} through ${through}`);
    if (wrong !== undefined) this.run.violate(wrong.property, wrong.detail);
  }
}

/** The answer of an update sent alongside other calls, or undefined when it failed (handled at once, as it may fail before it is awaited). */
function answerOf(sent: Promise<Bumped>): Promise<Bumped | undefined> {
  return sent.then(
    (v) => v,
    () => undefined,
  );
}
