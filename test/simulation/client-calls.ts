import type { Engine } from "@fusee/runtime";
import type { Expectation, Model } from "./model.js";
import { signalValue, stamped, startAttributes, updateId, type ClientCall, type Program } from "./program.js";
import { Sim, SimLate, type AddArg } from "./sim-workflow.js";

/**
 * A client call as made: the schedule's action with what is chosen when it is made (a mailbox
 * signal's unique value, an update's ID, a started program's epoch).
 */
export interface MadeCall {
  readonly action: ClientCall;
  /** The signal's value (unique for a mailbox), for `signal` and `sws`. */
  readonly value?: number | string;
  /** The update's ID, for `update` and `uws`. */
  readonly uid?: string;
  /** The started program, stamped with its epoch, for `start`, `sws` and `uws`. */
  readonly prog?: Program;
  /** For `reset`: the step chosen when the call is made (the `step`-th, cyclically, of the run's journal). */
  stepName?: string;
}

/** Chooses what a call of action `step` (the `sub`-th of a burst) carries; `epochs` counts the starts of each ID. */
export function makeCall(action: ClientCall, step: number, sub: number, epochs: Map<string, number>): MadeCall {
  const epoch = (): string => {
    const n = (epochs.get(action.id) ?? 0) + 1;
    epochs.set(action.id, n);
    return String(n);
  };
  switch (action.a) {
    case "start":
      return { action, prog: stamped(action.prog, epoch()) };
    case "signal":
      return { action, value: signalValue(step, sub, action.value) };
    case "update":
      return { action, uid: updateId(step, sub, action.uid) };
    case "sws":
      return { action, prog: stamped(action.prog, epoch()), value: signalValue(step, sub, 1) };
    case "uws":
      return { action, prog: stamped(action.prog, epoch()), uid: updateId(step, sub, action.uid) };
    default:
      return { action };
  }
}

/** Makes the call on the engine. */
export function issue(engine: Engine, c: MadeCall): Promise<unknown> {
  const x = c.action;
  const run = engine.run(x.id);
  switch (x.a) {
    case "start": {
      const options = {
        ...(x.policy === undefined ? {} : { idPolicy: x.policy }),
        ...(x.tag === undefined ? {} : { attributes: startAttributes(x.tag) }),
      };
      // Asked before the start: it answers once the ID has a run (at once if it had one already).
      const started = x.watch === true ? run.started() : undefined;
      started?.catch(() => undefined);
      return engine.start(x.late === true ? SimLate : Sim, x.id, c.prog as Program, options).then(async (h) => {
        await started;
        return h.id;
      });
    }
    case "signal":
      return run.signal(x.name, c.value);
    case "update":
      // A handle answers with the handler's journaled result once the update is accepted.
      if (x.handle === true)
        return run.startUpdate("add", { n: x.n, step: x.step } satisfies AddArg, { id: c.uid as string }).then((h) => h.result());
      return run.update("add", { n: x.n, step: x.step } satisfies AddArg, { id: c.uid as string });
    case "query":
      return run.query("state");
    case "cancel":
      return run.cancel("the simulation cancels it");
    case "terminate":
      return run.terminate("the simulation terminates it");
    case "sws":
      return engine.signalWithStart(Sim, x.id, c.prog as Program, "a", c.value).then((h) => h.id);
    case "uws":
      return engine
        .updateWithStart("Sim", x.id, c.prog, "add", { n: x.n, step: false } satisfies AddArg, { updateId: c.uid as string })
        .then((r) => r.result);
    case "reset":
      return engine.describe(x.id).then((d) => {
        const names = [...new Set((d?.journal ?? []).flatMap((r) => (r.kind === "step" ? [r.name] : [])))];
        c.stepName = names.length === 0 ? `s${x.step}` : (names[x.step % names.length] as string);
        return run.reset(c.stepName);
      });
  }
}

/** What the model expects of the call; it applies the call to the model's runs. */
export function expect(model: Model, c: MadeCall): Expectation {
  const x = c.action;
  model.event();
  switch (x.a) {
    case "start":
      return model.start(x.id, c.prog as Program, x.policy, x.tag, x.late === true ? "SimLate" : "Sim");
    case "signal":
      return model.signal(x.id, x.name, c.value as number | string);
    case "update":
      return model.update(x.id, { n: x.n, step: x.step }, c.uid);
    case "query":
      return model.query(x.id);
    case "cancel":
      return model.cancel(x.id);
    case "terminate":
      return model.terminate(x.id);
    case "sws":
      return model.signalWithStart(x.id, c.prog as Program, c.value as number);
    case "uws":
      return model.updateWithStart(x.id, c.prog as Program, { n: x.n, step: false }, c.uid as string);
    case "reset":
      return model.reset(x.id, c.stepName ?? `s${x.step}`);
  }
}
