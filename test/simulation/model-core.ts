import type { AddArg } from "./sim-workflow.js";
import { STEP_FAILURE } from "./sim-workflow.js";
import { messageObservation, sendMessage } from "./model-messages.js";
import {
  childObservation,
  freshRun,
  messageTargets,
  type Expectation,
  type ModelRun,
  type ModelStatus,
  type WorkflowType,
} from "./model-run.js";
import {
  childId,
  nextEpoch,
  parentOf,
  spawnId,
  stamped,
  STEP_LIMIT,
  type IdPolicyChoice,
  type Instr,
  type Program,
  type SimResult,
  type Tag,
  untilTime,
} from "./program.js";

/**
 * A reference model of the engine's observable behaviour on generated programs: a small
 * discrete-event interpreter over the same virtual time. It predicts each run's observations,
 * status and result, and each client call's outcome, as long as it can: a run whose future depends
 * on something the model cannot know (an operation a crash left in doubt, a step cut off by a
 * crash, a cancellation that lands inside a step, two events of one instant that race) becomes
 * undetermined, and from then on only the journal-level properties are checked for it.
 */
export abstract class ModelCore {
  now = 0;
  readonly runs = new Map<string, ModelRun>();
  /** IDs whose runs became undetermined at some point: what they start is not known either. */
  protected readonly everLost = new Set<string>();
  /** Runs with an event in the tick being processed (a close policy racing it is a tie). */
  protected readonly dueNow = new Set<string>();
  /** Why runs became undetermined, for the report. */
  readonly notes: string[] = [];
  /** Messages sent in the event being processed (a client call, a tick), by sender and target. */
  protected eventSends: { from: string; to: string }[] = [];
  /** Runs whose code the model is running now. */
  protected readonly running = new Set<ModelRun>();

  constructor(start: number) {
    this.now = start;
  }

  /** A client call begins: what runs do from here on happens in one event. */
  event(): void {
    this.eventSends = [];
  }

  // ---- time and faults ----

  /** Moves time to `t` (one tick), firing every timer due by then. */
  tick(t: number): void {
    this.now = t;
    this.event();
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

  protected target(id: string): ModelRun | undefined | "unknown" {
    const cur = this.runs.get(id);
    if (cur === undefined) return this.mayExistUnseen(id) ? "unknown" : undefined;
    if (cur.exists === "maybe") return "unknown";
    return cur;
  }

  /** A derived ID the model did not see started: known not to exist only while its parent is followed exactly. */
  mayExistUnseen(id: string): boolean {
    if (this.messagedUnseen(id, true)) return true;
    const parent = parentOf(id);
    if (parent === undefined) return false;
    if (this.everLost.has(parent)) return true;
    const p = this.runs.get(parent);
    return p === undefined ? this.mayExistUnseen(parent) : !p.determined;
  }

  /**
   * Whether a message from `from` to `to` races other work of this event: another sender's message
   * that touched either run (the engine runs both senders at once), or a timer of the target due
   * now. The runs involved leave the model.
   */
  messageRaces(from: string, to: string): boolean {
    const target = this.runs.get(to);
    const due =
      target !== undefined &&
      (this.dueNow.has(to) || ("at" in target.block && target.block.at !== undefined && target.block.at <= this.now));
    const touched = this.eventSends.filter((s) => s.from !== from && [s.from, s.to].some((x) => x === from || x === to));
    this.eventSends.push({ from, to });
    if (!due && touched.length === 0) return false;
    for (const s of touched) for (const x of [s.from, s.to]) this.loseRun(x, "messages of two runs raced in one instant");
    this.loseRun(to, due ? "a message reached it in the instant of its own timer" : "messages of two runs raced in one instant");
    return true;
  }

  /** Whether a run the model does not follow may send `id` a message (`starts`: one that starts it). */
  protected messagedUnseen(id: string, starts: boolean): boolean {
    for (const r of this.runs.values()) {
      if (r.id === id || r.determined) continue;
      if ([r.prog, ...r.maybe].some((p) => messageTargets(p, starts).includes(id))) return true;
    }
    return false;
  }

  protected begin(
    id: string,
    prog: Program,
    runId: number | undefined,
    parent: ModelRun["parent"],
    attrs: Record<string, unknown> = {},
    signals: readonly (number | string)[] = [],
    total = 0,
    type: WorkflowType = "Sim",
  ): ModelRun {
    const old = this.runs.get(id);
    const run = freshRun(id, prog, runId, parent);
    run.type = type;
    run.attrs = { ...attrs };
    run.total = total;
    if (signals.length > 0) run.mailbox.set("a", [...signals]);
    this.runs.set(id, run);
    if (this.messagedUnseen(id, false)) this.lose(run, "a run the model does not follow may send it messages");
    if (old !== undefined && !old.determined) {
      this.everLost.add(id);
      // The replaced run may have started others by messages before it went.
      for (const p of [old.prog, ...old.maybe])
        for (const to of messageTargets(p, true)) {
          if (to === id || this.runs.has(to)) continue;
          const maybe = freshRun(to, { body: [], catchCancel: false }, undefined, undefined);
          maybe.exists = "maybe";
          this.runs.set(to, maybe);
          this.lose(maybe, `a run of ${id} the model did not follow may have started it`);
        }
    }
    if (runId === undefined) this.lose(run, "its run ID is not known");
    this.proceed(run);
    return run;
  }

  protected lose(run: ModelRun, why: string): void {
    if (!run.determined) return;
    run.determined = false;
    this.everLost.add(run.id);
    // What it sends from here on is not known either.
    for (const to of messageTargets(run.prog, false))
      if (to !== run.id) this.loseRun(to, `${run.id}, which sends it messages, became undetermined`);
    this.notes.push(`${run.id}: ${why}`);
    for (const [cid, close] of run.children) {
      const child = this.runs.get(cid);
      if (child !== undefined && close !== "abandon") this.lose(child, `its parent ${run.id} became undetermined`);
    }
    // The parent may have gone on with what the child did (a result a fault then undid), not only wait for it.
    // A parent that took the child's result may have gone on to later runs (continue-as-new) because of it.
    const parent = run.parent && this.runs.get(run.parent.id);
    if (parent !== undefined && (parent.runId === run.parent?.runId || run.reported === true))
      this.lose(parent, `its child ${run.id} became undetermined`);
  }

  /** Runs the current run's code until it blocks or ends. */
  protected proceed(run: ModelRun): void {
    // A message the run's own code sends (to itself, or to a run that answers back) lands while it runs: it goes on from where it is.
    if (this.running.has(run)) return;
    // A run that continued as new is no longer its ID's run: a call that woke it must not run its end again.
    if (this.runs.get(run.id) !== run) return;
    this.running.add(run);
    try {
      while (run.status === "running" && run.determined && run.block.on === "none") {
        if (run.lingering === true) return this.finish(run, "ok", { obs: [...run.obs], total: run.total }, undefined);
        if (run.pc >= run.prog.body.length) {
          this.endOfBody(run);
          return;
        }
        this.exec(run, run.prog.body[run.pc] as Instr);
      }
    } finally {
      this.running.delete(run);
    }
  }

  protected exec(run: ModelRun, i: Instr): void {
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
      case "until":
        run.block = { on: "sleep", at: untilTime(this.now, i.ms) };
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
        const cid = childId(run.id, run.prog.epoch ?? "0", pc);
        run.children.set(cid, i.close);
        this.begin(cid, { ...stamped(i.prog, "1"), close: i.close }, 1, { id: run.id, runId: run.runId }).origin = run.id;
        if (!i.wait) return this.done(run, `c${pc}=started`);
        const child = this.runs.get(cid) as ModelRun;
        if (child.status !== "running") return this.done(run, childObservation(pc, child));
        if (!child.determined) return this.lose(run, `its child ${cid} is undetermined`);
        run.block = i.timeout === undefined ? { on: "child", childId: cid } : { on: "child", childId: cid, at: this.now + i.timeout };
        return;
      }
      case "spawn": {
        const sid = spawnId(run.id, run.prog.epoch ?? "0", pc);
        const existing = this.runs.get(sid);
        if (existing === undefined) this.begin(sid, stamped(i.prog, "1"), 1, undefined).origin = run.id;
        return this.done(run, `spawn${pc}=${sid}`);
      }
      case "look":
        return this.done(run, `look${pc}=${typeof run.attrs["tag"] === "string" ? run.attrs["tag"] : "-"}`);
      case "attrs":
        run.attrs.tag = i.tag;
        return this.done(run, undefined);
      case "unattrs":
        delete run.attrs.tag;
        return this.done(run, undefined);
      case "send": {
        const e = sendMessage(this, run, i, pc);
        if (e.outcome === "any") return this.lose(run, `its message ${i.op} to ${i.to} has an outcome the model cannot tell`);
        if (run.status !== "running" || !run.determined || run.pc !== pc) return;
        return this.done(run, messageObservation(pc, e));
      }
    }
  }

  /** The instruction at `pc` completed with an observation; the code goes on. */
  protected done(run: ModelRun, observation: string | undefined): void {
    if (observation !== undefined) run.obs.push(observation);
    run.block = { on: "none" };
    run.pc++;
  }

  protected resume(run: ModelRun, observation: string | undefined): void {
    this.done(run, observation);
    this.proceed(run);
  }

  protected fire(run: ModelRun): void {
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
      case "child":
        return this.childTimedOut(run, b.childId);
      default:
        return;
    }
  }

  protected endOfBody(run: ModelRun): void {
    const next = run.prog.next;
    if (next === undefined) return this.finish(run, "ok", { obs: [...run.obs], total: run.total }, undefined);
    this.closeChildren(run);
    if (!run.determined) return;
    const fresh = freshRun(
      run.id,
      stamped(next, nextEpoch(run.prog.epoch ?? "0")),
      run.runId === undefined ? undefined : run.runId + 1,
      run.parent,
    );
    // What the code did not take is handed on, and so are the outcomes of updates and the attributes.
    for (const [name, box] of run.mailbox) if (box.length > 0) fresh.mailbox.set(name, [...box]);
    fresh.updates = new Map(run.updates);
    fresh.type = run.type;
    const replace = run.prog.nextAttrs;
    fresh.attrs = replace === undefined ? { ...run.attrs } : replace === "none" ? {} : { tag: replace };
    this.runs.set(run.id, fresh);
    this.proceed(fresh);
  }

  protected deliverCancel(run: ModelRun): void {
    if (run.status !== "running" || !run.determined) return;
    const b = run.block;
    if (b.on === "sleep" || b.on === "wait" || b.on === "cond") {
      run.block = { on: "none" };
      // A cancellation that reaches a run lingering after the one it caught is not caught.
      if (run.prog.catchCancel && run.lingering !== true) {
        run.obs.push("caught");
        if (run.prog.linger !== true) return this.finish(run, "ok", { obs: [...run.obs], total: run.total }, undefined);
        run.lingering = true;
        const box = run.mailbox.get("b");
        if (box !== undefined && box.length > 0) return this.resume(run, `b=${box.shift()}`);
        run.block = { on: "wait", name: "b" };
        return;
      }
      return this.finish(run, "cancelled", undefined, "CancelledError");
    }
    this.lose(run, `a cancellation reached it while it was in ${b.on === "child" ? "a child's wait" : "a step"}`);
  }

  protected finish(
    run: ModelRun,
    status: Exclude<ModelStatus, "running">,
    value: SimResult | undefined,
    errorClass: string | undefined,
  ): void {
    run.status = status;
    run.value = value;
    run.errorClass = errorClass;
    run.block = { on: "none" };
    run.endedAt = this.now;
    this.closeChildren(run);
    const link = run.parent;
    const parent = link && this.runs.get(link.id);
    if (parent === undefined || parent.runId !== link?.runId || parent.status !== "running") return;
    if (!parent.determined) return;
    if (parent.block.on === "child" && parent.block.childId === run.id) {
      // The child's end and its parent's timeout for it fall in one instant: which comes first is a race.
      if (parent.block.at === this.now) return this.lose(parent, `its child ${run.id} ended in the instant its wait timed out`);
      run.reported = true;
      this.resume(parent, childObservation(parent.pc, run));
    }
  }

  /**
   * The wait for a child started with a timeout ran out: the parent goes on with `timeout`, and the
   * child, still running, gets its close policy as when its parent ends.
   */
  protected childTimedOut(run: ModelRun, cid: string): void {
    const child = this.runs.get(cid);
    const close = run.children.get(cid);
    if (child === undefined || close === undefined) return this.lose(run, `the model does not know its child ${cid}`);
    if (child.status !== "running" && child.endedAt === this.now)
      return this.lose(run, `its child ${cid} ended in the instant its wait timed out`);
    // The wait is over before the child is closed: the child's end no longer answers it.
    run.block = { on: "none" };
    child.reported = true;
    if (child.status === "running" && child.determined && close !== "abandon") {
      if (this.dueNow.has(cid) || ("at" in child.block && child.block.at === this.now)) {
        this.lose(child, `its parent ${run.id} timed out on it in the same instant as its own timer`);
        this.lose(run, `its child ${cid} had a timer in the instant its wait timed out`);
        return;
      }
      if (close === "terminate") this.finish(child, "terminated", undefined, "TerminatedError");
      else this.deliverCancel(child);
    }
    this.resume(run, `c${run.pc}=timeout`);
  }

  /** The run ends or is replaced: each child still running gets its close policy. */
  protected closeChildren(run: ModelRun): void {
    for (const [cid, close] of run.children) {
      const child = this.runs.get(cid);
      if (child !== undefined && child.status !== "running" && child.endedAt === this.now && !child.reported && close !== "abandon") {
        // The child's last step and its parent's end fall in one instant: which the engine does first is a race.
        this.lose(child, `it ended in the instant its parent ${run.id} ended`);
        continue;
      }
      if (child === undefined || child.status !== "running" || !child.determined || close === "abandon") continue;
      // A child the run's wait for it timed out on was closed then: a run closes each child once.
      if (child.reported === true) continue;
      if (this.dueNow.has(cid) || ("at" in child.block && child.block.at === this.now && this.dueNow.size > 0)) {
        this.lose(child, `its parent ${run.id} ended in the same instant as its own timer`);
        continue;
      }
      if (close === "terminate") this.finish(child, "terminated", undefined, "TerminatedError");
      else this.deliverCancel(child);
    }
  }

  // ---- the client calls messages make ----

  abstract signal(id: string, name: string, value: number | string): Expectation;
  abstract update(id: string, arg: AddArg, uid: string | undefined): Expectation;
  abstract cancel(id: string): Expectation;
  abstract start(id: string, prog: Program, policy: IdPolicyChoice | undefined, tag: Tag | undefined): Expectation;
  abstract signalWithStart(id: string, prog: Program, value: number | string): Expectation;
}
