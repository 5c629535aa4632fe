/*
 * Children with close policies across processes: a parent run starts children on other shards
 * (terminate, request-cancel, abandon), is signalled `finish` through a non-owner, and ends or
 * continues as new while its owner may be SIGKILLed. Once the parent's last run has ended, each child
 * must end as its policy says (terminated, cancelled, or still running), closed once and never
 * started again.
 */
import { sleep } from "./cluster-processes.js";
import { type ClientCalls, RETRY_GAP_MS, RETRY_MS, type ScheduleRun } from "./cluster-calls.js";
import { RELAY_END_MS, RESULT_ASK_MS } from "./cluster-relays.js";
import type { ClusterAction } from "./cluster-schedule.js";
import { FINISHED, type ClosePolicy, type Inspection } from "./wire.js";

type FamilyAction = Extract<ClusterAction, { a: "family" }>;

/** How long a child may take to reach the state its policy says once its parent ended. */
const CLOSE_MS = 10_000;

const CLOSED: Readonly<Record<ClosePolicy, (status: string) => boolean>> = {
  terminate: (s) => s === "terminated",
  "request-cancel": (s) => s === "cancelled",
  abandon: (s) => !FINISHED.has(s),
};

export class Families {
  constructor(
    private readonly run: ScheduleRun,
    private readonly calls: ClientCalls,
  ) {}

  async family(a: FamilyAction): Promise<void> {
    const { procs } = this.run;
    if (!(await this.calls.start(a.id, { route: "owner", slot: 0 }, { family: a.family }))) return;
    if (a.family.then === "reset" && !(await this.resetKeepingChildren(a))) return;
    const owner = a.killAtMs === undefined ? undefined : await procs.ownerOf(a.id);
    if (!(await this.finish(a.id))) return;
    if (owner !== undefined) {
      await sleep(a.killAtMs!);
      if (await procs.kill(owner)) this.run.later(procs.spawn(owner));
    }
    const ended = await procs.result<string>(a.id, RELAY_END_MS, RESULT_ASK_MS);
    if (ended === undefined) return this.run.note(`  parent ${a.id}: its end is unknown; its children are not checked`);
    this.run.note(`  parent ${a.id} ended: ${ended}`);
    for (const c of a.family.children) await this.closed(a.id, c.id, c.close);
  }

  /**
   * Resets the parent to its step after the children's start, through a non-owner: the new run
   * keeps its children, so none may have ended by it. False when the reset could not be made.
   */
  private async resetKeepingChildren(a: FamilyAction): Promise<boolean> {
    const deadline = Date.now() + RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      const seen = await this.run.procs
        .liveFrom(attempt)
        .send<Inspection | null>({ op: "inspect", id: a.id })
        .catch(() => undefined);
      if (seen?.steps.some((s) => s.name === "spawned") === true) break;
      if (Date.now() > deadline) return false;
      await sleep(RETRY_GAP_MS);
    }
    const h = await this.run.procs.route({ route: "other", slot: 0 }, a.id);
    try {
      await h.send({ op: "reset", id: a.id, step: "spawned" });
      this.run.outcome(`reset ${a.id}`, true, `through ${h.owner}`);
    } catch (e) {
      // A reset in doubt may or may not have happened; either way the children stay the parent's.
      this.run.outcome(`reset ${a.id}`, false, `through ${h.owner}: ${String(e)}`);
    }
    for (const c of a.family.children) {
      const child = await this.run.procs
        .liveFrom(0)
        .send<Inspection | null>({ op: "inspect", id: c.id })
        .catch(() => undefined);
      if (child !== undefined && (child === null || FINISHED.has(child.status)))
        this.run.violate("closePolicy", `child ${c.id} of ${a.id} is ${child?.status ?? "unknown"} after a reset that keeps it`);
    }
    return true;
  }

  /** Signals `finish` through a non-owner until one is acknowledged: a repeat is a signal no one waits for. */
  private async finish(id: string): Promise<boolean> {
    const deadline = Date.now() + RETRY_MS;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const h = await this.run.procs.route({ route: "other", slot: 0 }, id, attempt);
      try {
        await h.send({ op: "finish", id });
        this.run.outcome(`finish ${id}`, true, `through ${h.owner}`);
        return true;
      } catch {
        await sleep(RETRY_GAP_MS);
      }
    }
    this.run.outcome(`finish ${id}`, false, "no process took the signal");
    return false;
  }

  /** Waits until the child is as its policy says, or reports how it stands. */
  private async closed(parent: string, child: string, close: ClosePolicy): Promise<void> {
    const deadline = Date.now() + CLOSE_MS;
    let seen: Inspection | null | undefined;
    for (let attempt = 0; ; attempt++) {
      seen = await this.run.procs
        .liveFrom(attempt)
        .send<Inspection | null>({ op: "inspect", id: child })
        .catch(() => undefined);
      if (seen !== undefined && seen !== null && CLOSED[close](seen.status)) break;
      if (Date.now() > deadline) {
        const how = seen === null ? "unknown to the cluster" : seen === undefined ? "unreadable" : seen.status;
        return this.run.violate("closePolicy", `child ${child} (${close}) of ${parent} is ${how} after its parent ended`);
      }
      await sleep(RETRY_GAP_MS);
    }
    this.run.note(`  child ${child} (${close}): ${seen.status}`);
    this.run.covered.closed++;
    if (seen.runs !== 1 || seen.cancels > 1)
      this.run.violate("closePolicy", `child ${child} of ${parent} has ${seen.runs} runs and ${seen.cancels} cancels`);
  }
}
