/*
 * A cluster schedule as a reader follows it: one line per action, in the trace and in a failing
 * test's message.
 */
import type { ClusterAction, ClusterSchedule, Via } from "./cluster-schedule.js";
import type { Relayed } from "./wire.js";

/** A schedule as a reader follows it: one line per action. */
export function clusterScheduleText(s: ClusterSchedule): string {
  const ids = s.ids.map((id) => (s.renew[id] === undefined ? id : `${id} (continues as new every ${s.renew[id]})`));
  const head = `${s.engines} engines, ${s.shards} shards, lease ${s.leaseMs} ms, clock skews [${s.skews.join(", ")}] ms, runs ${ids.join(", ")}`;
  return [head, ...s.actions.map((a, i) => `  #${i} ${actionText(a)}`)].join("\n");
}

export function actionText(a: ClusterAction): string {
  const via = (v: Via): string => (v.route === "slot" ? `via slot ${v.slot}` : `via ${v.route === "owner" ? "its owner" : "a non-owner"}`);
  switch (a.a) {
    case "start":
      return `start ${a.id} ${via(a.via)}`;
    case "signal":
      return `signal ${a.id} add(${a.tag}) ${via(a.via)}`;
    case "update":
      return `update ${a.id} bump(${a.by}) id ${a.uid} ${via(a.via)}`;
    case "cancel":
      return `cancel ${a.id} ${via(a.via)}`;
    case "ownerLost":
      return `forward add(${a.tags.join(",")}) and bump(${a.by}) id ${a.uid} to ${a.id}'s owner, SIGKILLed at ${a.killAtMs} ms`;
    case "reset": {
      const [before, after] = [a.tags.slice(0, a.before), a.tags.slice(a.before)];
      return `reset ${a.id} to init via a non-owner, amid add(${before.join(",")}) before, add(${after.join(",")}) after and bump(${a.by}) id ${a.uid}`;
    }
    case "kill":
      return `SIGKILL slot ${a.slot}, a new process after ${a.restartAfterMs} ms`;
    case "pause":
      return `SIGSTOP slot ${a.slot} for ${a.ms} ms`;
    case "drop":
      return `terminate the database sessions of slot ${a.slot}`;
    case "dropMidCall":
      return `send add(${a.tags.join(",")}) and bump(${a.by}) id ${a.uid} to ${a.id}'s owner, its database sessions terminated at ${a.atMs} ms`;
    case "relay": {
      const kill = a.kill === undefined ? "" : `, its ${a.kill.who}'s owner SIGKILLed at ${a.kill.atMs} ms`;
      return `relay ${a.id} sends ${a.plan.map(relayedText).join(", ")}${kill}`;
    }
    case "family": {
      const children = a.family.children.map((c) => `${c.id} (${c.close})`).join(", ");
      const kill = a.killAtMs === undefined ? "" : `, its owner SIGKILLed ${a.killAtMs} ms after the signal`;
      const then = {
        end: "ends",
        continue: "continues as new",
        reset: "is reset through a non-owner to its step after the children's start, then ends",
        done: "",
      }[a.family.then];
      return `parent ${a.id} starts ${children}, then ${then} when signalled${kill}`;
    }
    case "schedule": {
      const fault =
        a.fault.kind === "none"
          ? ""
          : `, the holder of its shard ${a.fault.kind === "kill" ? "SIGKILLed" : "stopped past its lease"} at ${a.fault.atMs} ms`;
      return `schedule ${a.name} every ${a.everyMs} ms for ${a.lifeMs} ms${fault}`;
    }
    case "terminate":
      return `terminate ${a.id} via a non-owner${a.again ? ", then again" : ""}${killed(a.killAtMs)}`;
    case "withStart":
      return a.call === "signal"
        ? `signalWithStart ${a.id} add(${a.tag}) via a non-owner${killed(a.killAtMs)}`
        : `updateWithStart ${a.id} bump(${a.by}) id ${a.tag} via a non-owner${killed(a.killAtMs)}`;
    case "scheduleOps": {
      const fault =
        a.fault.kind === "none"
          ? ""
          : `; its holder ${a.fault.kind === "kill" ? "SIGKILLed" : "stopped past its lease"} at ${a.fault.atMs} ms`;
      const afterDelete = a.killAfterDeleteMs === undefined ? "" : `, its holder SIGKILLed ${a.killAfterDeleteMs} ms after`;
      return (
        `schedule ${a.name} every ${a.everyMs} ms, ${a.overlap}, runs lasting ${a.holdMs} ms: trigger at ${a.triggerAtMs} ms, ` +
        `backfill of ${a.backfill.from}..${a.backfill.to} ms before its creation at ${a.backfillAtMs} ms, every ${a.newEveryMs} ms ` +
        `from ${a.updateAtMs} ms, paused at ${a.lifeMs} ms, triggered, deleted${afterDelete}${fault}`
      );
    }
    case "batch": {
      const events = a.events.map((e) => `${e.afterMs > 0 ? `wait ${e.afterMs} ms, ` : ""}${e.tag}${e.withId ? " (with its ID)" : ""}`);
      return `batch ${a.key} of ${a.size} or ${a.timeoutMs} ms via non-owners: ${events.join(", ")}${killed(a.killAtMs)}`;
    }
    case "gap":
      return `wait ${a.ms} ms`;
  }
}

function relayedText(m: Relayed): string {
  switch (m.op) {
    case "signalWorkflow":
    case "signalWithStart":
      return `${m.op}(${m.to}, add(${m.tag}))`;
    case "updateWorkflow":
      return `${m.op}(${m.to}, bump(${m.by}) tag ${m.tag})`;
    case "cancelWorkflow":
    case "startWorkflow":
      return `${m.op}(${m.to})`;
  }
}

function killed(atMs: number | undefined): string {
  return atMs === undefined ? "" : `, its owner SIGKILLed ${atMs} ms after`;
}
