import type { ModelCore } from "./model-core.js";
import { ANY, type Expectation, type ModelRun } from "./model-run.js";
import { messageEpoch, messageValue, stamped, type SendInstr } from "./program.js";

/**
 * What a message from workflow code does in the model: it is applied to its target as the client
 * call of the same kind would be, at the instant the sender's code reaches it. The sender observes
 * the outcome (`m<pc>=ok`, the update's answer, or the error's class); `any` makes the sender
 * undetermined. Messages to the sender itself other than signals wait on the sender's own progress
 * (a cancel lands inside the sending step), so the model does not follow them.
 */
export function sendMessage(model: ModelCore, from: ModelRun, i: SendInstr, pc: number): Expectation {
  const epoch = from.prog.epoch ?? "0";
  if (i.to === from.id && i.op !== "signal") return ANY;
  if (from.runId === undefined) return ANY;
  const value = messageValue(from.id, epoch, from.runId, pc);
  if (model.messageRaces(from.id, i.to)) return ANY;
  switch (i.op) {
    case "signal":
      return model.signal(i.to, "a", value);
    case "cancel":
      return model.cancel(i.to);
    case "update":
      return model.update(i.to, { n: i.n, step: false }, undefined);
    case "start":
      if (endedThisInstant(model, i.to)) return ANY;
      return model.start(i.to, stamped(i.prog, messageEpoch(from.id, epoch, pc)), { running: i.running }, undefined);
    case "sws":
      if (endedThisInstant(model, i.to)) return ANY;
      return model.signalWithStart(i.to, stamped(i.prog, messageEpoch(from.id, epoch, pc)), value);
  }
}

/** How a sender observes a message's outcome. */
export function messageObservation(pc: number, e: Expectation): string {
  if (e.outcome === "error") return `m${pc}=${e.errorClass}`;
  return `m${pc}=${"value" in e ? String(e.value) : "ok"}`;
}

/**
 * Whether the target's run ended in this very instant (a cancel this sender's code sent a moment
 * ago, a termination, its own last step): the engine ends it when its code has taken that in, so a
 * start sent now may still find it running (AlreadyExistsError, or a signal to the old run).
 */
function endedThisInstant(model: ModelCore, id: string): boolean {
  const target = model.runs.get(id);
  return target !== undefined && target.status !== "running" && target.endedAt === model.now;
}
