import type { AddArg } from "./sim-workflow.js";
import { ModelCore } from "./model-core.js";
import { ANY, error, freshRun, messageTargets, OK, type Expectation, type ModelRun, type WorkflowType } from "./model-run.js";
import { startAttributes, type ClientCall, type IdPolicyChoice, type Program, type Tag } from "./program.js";

export type { Expectation, ModelRun, ModelStatus } from "./model-run.js";

/** The reference model with the client calls: what each should give, applied to the model's runs (see {@link ModelCore}). */
export class Model extends ModelCore {
  start(id: string, prog: Program, policy: IdPolicyChoice | undefined, tag: Tag | undefined, type: WorkflowType = "Sim"): Expectation {
    const attrs = startAttributes(tag);
    const cur = this.runs.get(id);
    if (cur === undefined) {
      if (this.mayExistUnseen(id)) return this.unknownStart(id, prog);
      this.begin(id, prog, 1, undefined, attrs, [], 0, type);
      return OK;
    }
    if (!cur.determined) return this.unknownStart(id, prog);
    if (cur.status === "running") {
      const running = policy?.running ?? "fail";
      if (running === "fail") return error("AlreadyExistsError");
      if (running === "use-existing") return OK;
      this.finish(cur, "terminated", undefined, "TerminatedError");
    } else {
      const finished = policy?.finished ?? "allow";
      if (finished === "refuse" || (finished === "allow-if-failed" && cur.status === "ok")) return error("AlreadyExistsError");
    }
    this.begin(id, prog, cur.runId === undefined ? undefined : cur.runId + 1, undefined, attrs, [], 0, type);
    return OK;
  }

  /** A start whose outcome the model cannot tell: the ID's run may be running `prog` from now on. */
  private unknownStart(id: string, prog: Program): Expectation {
    this.doubt(id, "a start the model cannot tell the outcome of", prog);
    return ANY;
  }

  /** `signalWithStart` on mailbox `a`: signals the running run, or starts one with the signal in its start. */
  signalWithStart(id: string, prog: Program, value: number | string): Expectation {
    const cur = this.target(id);
    if (cur === "unknown" || (cur !== undefined && !cur.determined)) return this.unknownStart(id, prog);
    if (cur !== undefined && cur.status === "running") return this.signal(id, "a", value);
    this.begin(id, prog, cur === undefined ? 1 : cur.runId === undefined ? undefined : cur.runId + 1, undefined, {}, [value]);
    return OK;
  }

  /** `updateWithStart` of `add`: updates the running run, or starts one that applies the update first. */
  updateWithStart(id: string, prog: Program, arg: AddArg, uid: string): Expectation {
    const cur = this.target(id);
    if (cur === "unknown" || (cur !== undefined && !cur.determined)) return this.unknownStart(id, prog);
    if (cur === undefined || cur.status !== "running") {
      // The run's code begins first and the update right after it, at the code's first wait (every
      // instruction awaits), whatever the validator says: a refused update is answered so, and the
      // handler never runs.
      const runId = cur === undefined ? 1 : cur.runId === undefined ? undefined : cur.runId + 1;
      const waits = prog.body.length > 0;
      const run = this.begin(id, prog, runId, undefined, {}, [], waits ? Math.max(0, arg.n) : 0);
      if (arg.n < 0) {
        // The refusal is the update's journaled outcome, handed on if the run continued as new at once.
        this.runs.get(id)?.updates.set(uid, error("RejectedError"));
        return error("RejectedError");
      }
      if (this.runs.get(id) !== run) {
        this.loseRun(id, "an update-with-start reached a run that had already continued as new");
        return ANY;
      }
      // A body that returns at once has its result before the update applies; the handler still
      // runs, so what a query replays holds the update.
      if (!waits) run.total += arg.n;
      run.updates.set(uid, { outcome: "ok", value: arg.n });
      return { outcome: "ok", value: arg.n };
    }
    return this.update(id, arg, uid);
  }

  /** `reset` to step `name`: the model follows the new run no further, but knows its run ID. */
  reset(id: string, name: string): Expectation {
    const cur = this.target(id);
    if (cur === "unknown") return ANY;
    if (cur === undefined) return error("NotFoundError");
    this.childrenStartedAgain(cur);
    if (!cur.determined) return ANY;
    const m = /^s(\d+)$/.exec(name);
    if (m === null) {
      // A step of an update, a message or a clean-up: whether it ran is not the model's to tell.
      this.lose(cur, `it was reset to ${name}, or not`);
      return ANY;
    }
    const step = Number(m[1]);
    if (cur.prog.body[step]?.k !== "step" || cur.pc < step) return error("RejectedError");
    if (cur.pc === step && cur.status !== "failed") {
      if (cur.status === "running" && cur.block.on === "step") return ANY;
      return error("RejectedError");
    }
    if (cur.runId !== undefined) cur.runId++;
    cur.status = "running";
    this.lose(cur, "it was reset");
    return OK;
  }

  /**
   * The new run of a reset starts again the children its code starts after the step, under the same
   * IDs, whatever their policy: also when the model no longer follows the parent (an abandoned child
   * it started still counts), and when the reset itself may not have happened.
   */
  private childrenStartedAgain(cur: ModelRun): void {
    for (const child of cur.children.keys()) this.loseRun(child, `its parent ${cur.id} was reset`);
  }

  /**
   * After an acknowledged start of an ID the model had lost track of: when the policy makes a new
   * run whatever the old one was doing, the model follows the new run from here.
   */
  startedAnyway(
    id: string,
    prog: Program,
    policy: IdPolicyChoice | undefined,
    tag: Tag | undefined,
    runId: number,
    type: WorkflowType,
  ): void {
    const cur = this.runs.get(id);
    if (cur === undefined || cur.determined) return;
    const fresh = (policy?.running ?? "fail") === "terminate-existing" && (policy?.finished ?? "allow") === "allow";
    if (fresh) this.begin(id, prog, runId, undefined, startAttributes(tag), [], 0, type);
    else cur.exists = true;
  }

  /** An acknowledged start of an ID the model does not follow: a run of it exists. */
  exists(id: string): void {
    const cur = this.runs.get(id);
    if (cur !== undefined && !cur.determined) cur.exists = true;
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
      box.push(value);
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
    const known = uid === undefined ? undefined : cur.updates.get(uid);
    if (known !== undefined) return known;
    if (cur.status !== "running") return error("RejectedError");
    if (arg.n < 0) return error("RejectedError");
    cur.total += arg.n;
    if (uid !== undefined) cur.updates.set(uid, { outcome: "ok", value: cur.total });
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

  /**
   * A client call that raced others in one instant, or whose outcome never came back before its
   * engine died: it may or may not have happened.
   */
  doubtCall(call: ClientCall, what: string, prog: Program | undefined): void {
    if (call.a === "query") return;
    const cur = this.runs.get(call.id);
    if (call.a === "reset" && cur !== undefined) this.childrenStartedAgain(cur);
    this.doubt(call.id, what, prog);
  }

  /** A call whose outcome never came back before its engine died: it may or may not have happened. */
  doubt(id: string, what: string, prog?: Program): void {
    let cur = this.runs.get(id);
    if (cur === undefined) {
      cur = freshRun(id, { body: [], catchCancel: false }, undefined, undefined);
      cur.exists = "maybe";
      this.runs.set(id, cur);
    }
    // The ID's run may be running this program now: what it would send is not known either.
    if (prog !== undefined) cur.maybe.push(prog);
    this.lose(cur, `${what} was left in doubt`);
    if (prog !== undefined) for (const to of messageTargets(prog, false)) if (to !== id) this.loseRun(to, `${id} may send it messages`);
  }
}
