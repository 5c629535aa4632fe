import type { AddArg } from "./sim-workflow.js";
import { STEP_FAILURE } from "./sim-workflow.js";
import {
  childId,
  spawnId,
  STEP_LIMIT,
  type ClosePolicy,
  type IdPolicyChoice,
  type Instr,
  type Program,
  type SimResult,
} from "./program.js";

export type ModelStatus = "running" | "ok" | "failed" | "cancelled" | "terminated";

/** What a client call should give, as far as the model can tell. */
export type Expectation =
  | { readonly outcome: "any" }
  | { readonly outcome: "ok"; readonly value?: unknown }
  | { readonly outcome: "error"; readonly errorClass: string };

const ANY: Expectation = { outcome: "any" };
const OK: Expectation = { outcome: "ok" };
const error = (errorClass: string): Expectation => ({ outcome: "error", errorClass });

type Block =
  | { readonly on: "none" }
  | { readonly on: "sleep"; readonly at: number }
  | { readonly on: "wait"; readonly name: string; readonly at?: number }
  | { readonly on: "cond"; readonly flag: string; readonly at?: number }
  | { readonly on: "child"; readonly childId: string }
  /** A step whose attempts and back-offs end at `at`, with this outcome. */
  | { readonly on: "step"; readonly at: number; readonly ok: boolean; readonly errorClass: string }
  | { readonly on: "hang" };

/** The model's view of the current run of one workflow ID. */
export interface ModelRun {
  readonly id: string;
  runId: number | undefined;
  prog: Program;
  pc: number;
  obs: string[];
  total: number;
  flags: Set<string>;
  mailbox: Map<string, number[]>;
  /** Results of updates by update ID. */
  updates: Map<string, number>;
  status: ModelStatus;
  value: SimResult | undefined;
  errorClass: string | undefined;
  /** The model follows this run exactly; once false, only journal-level properties are checked for it. */
  determined: boolean;
  /** Whether the run exists: `maybe` after a start that a crash left in doubt. */
  exists: true | "maybe";
  block: Block;
  parent: { readonly id: string; readonly runId: number | undefined } | undefined;
  /** Children this run started, with their close policies. */
  children: Map<string, ClosePolicy>;
}

/**
 * A reference model of the engine's observable behaviour on generated programs: a small
 * discrete-event interpreter over the same virtual time. It predicts each run's observations,
 * status and result, and each client call's outcome, as long as it can: a run whose future depends
 * on something the model cannot know (an operation a crash left in doubt, a step cut off by a
 * crash, a cancellation that lands inside a step, two events of one instant that race) becomes
 * undetermined, and from then on only the journal-level properties are checked for it.
 */
export class Model {
  now = 0;
  readonly runs = new Map<string, ModelRun>();
  /** IDs whose runs became undetermined at some point: what they start is not known either. */
  private readonly everLost = new Set<string>();
  /** Runs with an event in the tick being processed (a close policy racing it is a tie). */
  private readonly dueNow = new Set<string>();
  /** Why runs became undetermined, for the report. */
  readonly notes: string[] = [];

  constructor(start: number) {
    this.now = start;
  }

  // ---- client calls ----

  start(id: string, prog: Program, policy: IdPolicyChoice | undefined): Expectation {
    const cur = this.runs.get(id);
    if (cur === undefined) {
      this.begin(id, prog, 1, undefined);
      return OK;
    }
    if (!cur.determined) return ANY;
    if (cur.status === "running") {
      const running = policy?.running ?? "fail";
      if (running === "fail") return error("AlreadyExistsError");
      if (running === "use-existing") return OK;
      this.finish(cur, "terminated", undefined, "TerminatedError");
    } else {
      const finished = policy?.finished ?? "allow";
      if (finished === "refuse" || (finished === "allow-if-failed" && cur.status === "ok")) return error("AlreadyExistsError");
    }
    this.begin(id, prog, cur.runId === undefined ? undefined : cur.runId + 1, undefined);
    return OK;
  }

  /**
   * After an acknowledged start of an ID the model had lost track of: when the policy makes a new
   * run whatever the old one was doing, the model follows the new run from here.
   */
  startedAnyway(id: string, prog: Program, policy: IdPolicyChoice | undefined, runId: number): void {
    const cur = this.runs.get(id);
    if (cur === undefined || cur.determined) return;
    const fresh = (policy?.running ?? "fail") === "terminate-existing" && (policy?.finished ?? "allow") === "allow";
    if (fresh) this.begin(id, prog, runId, undefined);
    else cur.exists = true;
  }

  signal(id: string, name: string, value: number | string): Expectation {
    const cur = this.target(id);
    if (cur === "unknown") return ANY;
    if (cur === undefined) return error("NotFoundError");
    if (!cur.determined) return ANY;
    if (cur.status !== "running") return error("RejectedError");
    if (name === "set") {
      cur.flags.add(String(value));
      if (cur.block.on === "cond" && cur.block.flag === value) this.resume(cur, `${cur.block.flag}=true`);
    } else if (cur.block.on === "wait" && cur.block.name === name) {
      this.resume(cur, `${name}=${value}`);
    } else {
      const box = cur.mailbox.get(name) ?? [];
      box.push(value as number);
      cur.mailbox.set(name, box);
    }
    this.proceed(cur);
    return OK;
  }

  update(id: string, arg: AddArg, uid: string | undefined): Expectation {
    const cur = this.target(id);
    if (cur === "unknown") return ANY;
    if (cur === undefined) return error("NotFoundError");
    if (!cur.determined) return ANY;
    if (uid !== undefined && cur.updates.has(uid)) return { outcome: "ok", value: cur.updates.get(uid) };
    if (cur.status !== "running") return error("RejectedError");
    if (arg.n < 0) return error("RejectedError");
    cur.total += arg.n;
    if (uid !== undefined) cur.updates.set(uid, cur.total);
    return { outcome: "ok", value: cur.total };
  }

  query(id: string): Expectation {
    const cur = this.target(id);
    if (cur === "unknown") return ANY;
    if (cur === undefined) return error("NotFoundError");
    if (!cur.determined) return ANY;
    return { outcome: "ok", value: { obs: [...cur.obs], total: cur.total } };
  }

  cancel(id: string): Expectation {
    const cur = this.target(id);
    if (cur === "unknown") return ANY;
    if (cur === undefined) return error("NotFoundError");
    if (!cur.determined) return ANY;
    if (cur.status !== "running") return error("RejectedError");
    this.deliverCancel(cur);
    return OK;
  }

  terminate(id: string): Expectation {
    const cur = this.target(id);
    if (cur === "unknown") return ANY;
    if (cur === undefined) return error("NotFoundError");
    if (!cur.determined) return ANY;
    if (cur.status !== "running") return error("RejectedError");
    this.finish(cur, "terminated", undefined, "TerminatedError");
    return OK;
  }

  /** A call whose outcome never came back before its engine died: it may or may not have happened. */
  doubt(id: string, what: string): void {
    const cur = this.runs.get(id);
    if (cur === undefined) {
      this.runs.set(id, this.fresh(id, { body: [], catchCancel: false }, undefined, undefined));
      const made = this.runs.get(id) as ModelRun;
      made.exists = "maybe";
      this.lose(made, `${what} was left in doubt`);
      return;
    }
    this.lose(cur, `${what} was left in doubt`);
  }

  // ---- time and faults ----

  /** Moves time to `t` (one tick), firing every timer due by then. */
  tick(t: number): void {
    this.now = t;
    for (;;) {
      let fired: ModelRun | undefined;
      for (const run of this.runs.values()) {
        if (run.status !== "running" || !run.determined) continue;
        const at = "at" in run.block ? run.block.at : undefined;
        if (at !== undefined && at <= t) {
          fired = run;
          break;
        }
      }
      if (fired === undefined) break;
      this.dueNow.add(fired.id);
      this.fire(fired);
    }
    this.dueNow.clear();
  }

  /** The engine restarted (a crash or a clean restart): steps in flight begin again, off the model's clock. */
  interrupted(): void {
    for (const run of this.runs.values()) {
      if (run.status === "running" && run.determined && run.block.on === "step")
        this.lose(run, "a restart cut off a step between attempts");
    }
  }

  /** The runs in a step with back-offs or time limits: what a restart would start again. */
  stepping(): string[] {
    const ids: string[] = [];
    for (const run of this.runs.values()) if (run.status === "running" && run.determined && run.block.on === "step") ids.push(run.id);
    return ids;
  }

  /** Stops following a run exactly (the simulation saw something the model cannot predict). */
  loseRun(id: string, why: string): void {
    const run = this.runs.get(id);
    if (run !== undefined) this.lose(run, why);
  }

  // ---- internals ----

  private target(id: string): ModelRun | undefined | "unknown" {
    const cur = this.runs.get(id);
    if (cur === undefined) return this.mayExistUnseen(id) ? "unknown" : undefined;
    if (cur.exists === "maybe") return "unknown";
    return cur;
  }

  /** A derived ID the model did not see started: known not to exist only while its parent is followed exactly. */
  mayExistUnseen(id: string): boolean {
    const m = /^(.*)-(\d+)-[cs]\d+$/.exec(id);
    if (m === null) return false;
    const parent = m[1] as string;
    if (this.everLost.has(parent)) return true;
    const p = this.runs.get(parent);
    return p === undefined ? this.mayExistUnseen(parent) : !p.determined;
  }

  private fresh(id: string, prog: Program, runId: number | undefined, parent: ModelRun["parent"]): ModelRun {
    return {
      id,
      runId,
      prog,
      pc: 0,
      obs: [],
      total: 0,
      flags: new Set(),
      mailbox: new Map(),
      updates: new Map(),
      status: "running",
      value: undefined,
      errorClass: undefined,
      determined: true,
      exists: true,
      block: { on: "none" },
      parent,
      children: new Map(),
    };
  }

  private begin(id: string, prog: Program, runId: number | undefined, parent: ModelRun["parent"]): ModelRun {
    const old = this.runs.get(id);
    const run = this.fresh(id, prog, runId, parent);
    this.runs.set(id, run);
    if (old !== undefined && !old.determined) this.everLost.add(id);
    if (runId === undefined) this.lose(run, "its run ID is not known");
    this.proceed(run);
    return run;
  }

  private lose(run: ModelRun, why: string): void {
    if (!run.determined) return;
    run.determined = false;
    this.everLost.add(run.id);
    this.notes.push(`${run.id}: ${why}`);
    for (const [cid, close] of run.children) {
      const child = this.runs.get(cid);
      if (child !== undefined && close !== "abandon") this.lose(child, `its parent ${run.id} became undetermined`);
    }
    // The parent may have gone on with what the child did (a result a fault then undid), not only wait for it.
    const parent = run.parent && this.runs.get(run.parent.id);
    if (parent !== undefined && parent.runId === run.parent?.runId) this.lose(parent, `its child ${run.id} became undetermined`);
  }

  /** Runs the current run's code until it blocks or ends. */
  private proceed(run: ModelRun): void {
    while (run.status === "running" && run.determined && run.block.on === "none") {
      if (run.pc >= run.prog.body.length) {
        this.endOfBody(run);
        return;
      }
      this.exec(run, run.prog.body[run.pc] as Instr);
    }
  }

  private exec(run: ModelRun, i: Instr): void {
    const pc = run.pc;
    switch (i.k) {
      case "step": {
        const name = `s${pc}`;
        if (i.b === "ok") return this.done(run, `${name}=v${name}`);
        if (i.b === "hang" && i.limit === undefined) {
          run.block = { on: "hang" };
          return;
        }
        let t = 0;
        for (let attempt = 1; attempt <= i.tries; attempt++) {
          let failed: string | undefined;
          if (i.b === "hang") {
            t += STEP_LIMIT;
            failed = "TimeoutError";
          } else if (i.b === "fail" || attempt - 1 < i.fails) failed = STEP_FAILURE;
          if (failed === undefined) {
            if (t === 0) return this.done(run, `${name}=v${name}`);
            run.block = { on: "step", at: this.now + t, ok: true, errorClass: "" };
            return;
          }
          if (attempt === i.tries) {
            if (t === 0) return this.finish(run, "failed", undefined, failed);
            run.block = { on: "step", at: this.now + t, ok: false, errorClass: failed };
            return;
          }
          t += i.backoff * 2 ** (attempt - 1);
        }
        return;
      }
      case "sleep":
        run.block = { on: "sleep", at: this.now + i.ms };
        return;
      case "wait": {
        const box = run.mailbox.get(i.name);
        if (box !== undefined && box.length > 0) return this.done(run, `${i.name}=${box.shift()}`);
        run.block = i.timeout === undefined ? { on: "wait", name: i.name } : { on: "wait", name: i.name, at: this.now + i.timeout };
        return;
      }
      case "cond":
        if (run.flags.has(i.flag)) return this.done(run, `${i.flag}=true`);
        run.block = i.timeout === undefined ? { on: "cond", flag: i.flag } : { on: "cond", flag: i.flag, at: this.now + i.timeout };
        return;
      case "child": {
        if (run.runId === undefined) return this.lose(run, "it starts a child under an unknown run ID");
        const cid = childId(run.id, run.runId, pc);
        run.children.set(cid, i.close);
        this.begin(cid, i.prog, 1, { id: run.id, runId: run.runId });
        if (!i.wait) return this.done(run, `c${pc}=started`);
        const child = this.runs.get(cid) as ModelRun;
        if (child.status !== "running") return this.done(run, childObservation(pc, child));
        if (!child.determined) return this.lose(run, `its child ${cid} is undetermined`);
        run.block = { on: "child", childId: cid };
        return;
      }
      case "spawn": {
        if (run.runId === undefined) return this.lose(run, "it spawns under an unknown run ID");
        const sid = spawnId(run.id, run.runId, pc);
        const existing = this.runs.get(sid);
        if (existing === undefined) this.begin(sid, i.prog, 1, undefined);
        return this.done(run, `spawn${pc}=${sid}`);
      }
    }
  }

  /** The instruction at `pc` completed with an observation; the code goes on. */
  private done(run: ModelRun, observation: string | undefined): void {
    if (observation !== undefined) run.obs.push(observation);
    run.block = { on: "none" };
    run.pc++;
  }

  private resume(run: ModelRun, observation: string | undefined): void {
    this.done(run, observation);
    this.proceed(run);
  }

  private fire(run: ModelRun): void {
    const b = run.block;
    switch (b.on) {
      case "sleep":
        return this.resume(run, undefined);
      case "wait":
        return this.resume(run, `${b.name}=timeout`);
      case "cond":
        return this.resume(run, `${b.flag}=false`);
      case "step":
        if (b.ok) return this.resume(run, `s${run.pc}=vs${run.pc}`);
        return this.finish(run, "failed", undefined, b.errorClass);
      default:
        return;
    }
  }

  private endOfBody(run: ModelRun): void {
    const next = run.prog.next;
    if (next === undefined) return this.finish(run, "ok", { obs: [...run.obs], total: run.total }, undefined);
    for (const [cid] of run.children) {
      const child = this.runs.get(cid);
      if (child !== undefined && child.status === "running") this.lose(child, `its parent ${run.id} continued as new while it ran`);
    }
    const fresh = this.fresh(run.id, next, run.runId === undefined ? undefined : run.runId + 1, run.parent);
    // The updates a run answered are answered again, not applied again, by the run that continues it.
    for (const [uid, value] of run.updates) fresh.updates.set(uid, value);
    this.runs.set(run.id, fresh);
    this.proceed(fresh);
  }

  private deliverCancel(run: ModelRun): void {
    if (run.status !== "running" || !run.determined) return;
    const b = run.block;
    if (b.on === "sleep" || b.on === "wait" || b.on === "cond") {
      run.block = { on: "none" };
      if (run.prog.catchCancel) {
        run.obs.push("caught");
        return this.finish(run, "ok", { obs: [...run.obs], total: run.total }, undefined);
      }
      return this.finish(run, "cancelled", undefined, "CancelledError");
    }
    this.lose(run, `a cancellation reached it while it was in ${b.on === "child" ? "a child's wait" : "a step"}`);
  }

  private finish(
    run: ModelRun,
    status: Exclude<ModelStatus, "running">,
    value: SimResult | undefined,
    errorClass: string | undefined,
  ): void {
    run.status = status;
    run.value = value;
    run.errorClass = errorClass;
    run.block = { on: "none" };
    for (const [cid, close] of run.children) {
      const child = this.runs.get(cid);
      if (child === undefined || child.status !== "running" || !child.determined || close === "abandon") continue;
      if (this.dueNow.has(cid) || ("at" in child.block && child.block.at === this.now && this.dueNow.size > 0)) {
        this.lose(child, `its parent ${run.id} ended in the same instant as its own timer`);
        continue;
      }
      if (close === "terminate") this.finish(child, "terminated", undefined, "TerminatedError");
      else this.deliverCancel(child);
    }
    const link = run.parent;
    const parent = link && this.runs.get(link.id);
    if (parent === undefined || parent.runId !== link?.runId || parent.status !== "running") return;
    if (!parent.determined) return;
    if (parent.block.on === "child" && parent.block.childId === run.id) this.resume(parent, childObservation(parent.pc, run));
  }
}

function childObservation(pc: number, child: ModelRun): string {
  if (child.status === "ok") return `c${pc}=ok:${JSON.stringify(child.value)}`;
  return `c${pc}=${child.status}`;
}
