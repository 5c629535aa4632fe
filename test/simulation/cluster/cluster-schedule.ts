/*
 * The seeded schedules of the cluster simulation: how many engine processes share the database,
 * their clock skews, and the calls and faults the scheduler sends them, in order, with the gaps
 * between them. Everything here is a pure function of the seed.
 */

import type { ClosePolicy, Family, Relayed } from "./wire.js";
import type * as SeededModule from "../../../packages/runtime/test/support/seeded.js";

// The runtime's test support is not part of its package: loaded from its build output, whose place
// relative to this file's differs between the source and the build.
const { Seeded } = (await import(
  new URL("../../../../packages/runtime/dist/test/support/seeded.js", import.meta.url).href
)) as typeof SeededModule;
type Seeded = InstanceType<typeof Seeded>;

/** The faults a schedule may place. */
export const FAULTS = ["kill", "pause", "drop", "ownerLost", "skew"] as const;
export type Fault = (typeof FAULTS)[number];

/**
 * Through which process a call goes: the process holding the run's shard, another one (the call
 * is forwarded), or the one in `slot` whatever it holds.
 */
export type Route = "owner" | "other" | "slot";
export interface Via {
  readonly route: Route;
  readonly slot: number;
}

export type ClusterAction =
  | { readonly a: "start"; readonly id: string; readonly via: Via }
  | { readonly a: "signal"; readonly id: string; readonly tag: string; readonly via: Via }
  | { readonly a: "update"; readonly id: string; readonly uid: string; readonly by: number; readonly via: Via }
  | { readonly a: "cancel"; readonly id: string; readonly via: Via }
  /** Signals and one update forwarded from a non-owner while the run's owner is SIGKILLed `killAtMs` after (or before) the first. */
  | {
      readonly a: "ownerLost";
      readonly id: string;
      readonly tags: readonly string[];
      readonly uid: string;
      readonly by: number;
      readonly killAtMs: number;
    }
  /** `run.reset("init")` through a non-owner, amid signals (the first `before` of `tags` sent ahead of it) and an update. */
  | {
      readonly a: "reset";
      readonly id: string;
      readonly tags: readonly string[];
      readonly before: number;
      readonly uid: string;
      readonly by: number;
      readonly slot: number;
    }
  /** SIGKILL of the process in `slot`; a new process takes its place after `restartAfterMs`. */
  | { readonly a: "kill"; readonly slot: number; readonly restartAfterMs: number }
  /** SIGSTOP of the process in `slot` for `ms`, longer than its lease when `ms` exceeds `leaseMs`. */
  | { readonly a: "pause"; readonly slot: number; readonly ms: number }
  /** Every database session of the process in `slot` terminated: an insert in flight may or may not have committed. */
  | { readonly a: "drop"; readonly slot: number }
  /** Signals and one update sent to the run's owner, whose database sessions are terminated `atMs` after the first: before or after their commit. */
  | {
      readonly a: "dropMidCall";
      readonly id: string;
      readonly tags: readonly string[];
      readonly uid: string;
      readonly by: number;
      readonly atMs: number;
    }
  /**
   * A relay run started on its own shard sends `plan` from workflow code to other runs; the process
   * holding the relay's shard (`sender`) or its first target's (`target`) may be SIGKILLed `atMs` after its start is acknowledged.
   */
  | { readonly a: "relay"; readonly id: string; readonly plan: readonly Relayed[]; readonly kill?: RelayKill }
  /**
   * A parent run starting children on other shards with close policies, signalled `finish` through
   * a non-owner, then ending or continuing as new, its owner SIGKILLed `killAtMs` after the signal.
   */
  | { readonly a: "family"; readonly id: string; readonly family: Family; readonly killAtMs?: number }
  /**
   * A schedule every `everyMs`, created through any process and paused `lifeMs` later; `atMs` after
   * its creation the process holding its shard is SIGKILLed or stopped past its lease (or nothing).
   */
  | {
      readonly a: "schedule";
      readonly name: string;
      readonly everyMs: number;
      readonly lifeMs: number;
      readonly fault: { readonly kind: "kill" | "pause" | "none"; readonly atMs: number };
    }
  | { readonly a: "gap"; readonly ms: number };

export interface RelayKill {
  readonly who: "sender" | "target";
  readonly atMs: number;
}

export interface ClusterSchedule {
  readonly seed: number;
  readonly engines: number;
  readonly shards: number;
  readonly leaseMs: number;
  /** Each slot's clock skew in ms (all zero unless the schedule skews clocks). */
  readonly skews: readonly number[];
  readonly ids: readonly string[];
  /** The IDs whose runs continue as new, by how many signals and updates each run applies first. */
  readonly renew: Readonly<Record<string, number>>;
  readonly actions: readonly ClusterAction[];
}

export interface ScheduleSpace {
  /** The faults schedules may place. */
  readonly faults: ReadonlySet<Fault>;
  /** Calls and faults per schedule, at most. */
  readonly maxActions: number;
}

export const FULL_CLUSTER_SPACE: ScheduleSpace = { faults: new Set(FAULTS), maxActions: 24 };

const LEASE_CHOICES = [900, 1_200];

/** The schedule of `seed`. */
export function clusterSchedule(seed: number, space: ScheduleSpace = FULL_CLUSTER_SPACE): ClusterSchedule {
  const r = new Seeded(seed);
  const engines = r.int(2, 3);
  const shards = r.pick([4, 6, 8]);
  const leaseMs = r.pick(LEASE_CHOICES);
  // Small skews, and ones of seconds: a run's timers then fall due late or early where its shard moves.
  const skewMs = r.pick([400, 3_000]);
  const skews = Array.from({ length: engines }, () => (space.faults.has("skew") && r.chance(0.5) ? r.int(-skewMs, skewMs) : 0));
  const ids = Array.from({ length: r.int(2, 5) }, (_, i) => `r${i}`);
  const renew: Record<string, number> = {};
  for (const id of ids) if (r.chance(0.5)) renew[id] = r.int(2, 4);
  const actions: ClusterAction[] = [];
  const cancelled = new Set<string>();
  const faults = [...space.faults].filter((f) => f !== "skew");
  let tags = 0;
  let uids = 0;
  let relays = 0;
  let families = 0;
  const via = (): Via => ({ route: r.pick<Route>(["owner", "other", "other", "slot"]), slot: r.int(0, engines - 1) });
  // Some runs start at once, the others when first used: their starts meet the faults too.
  const started = new Set(ids.filter(() => r.chance(0.5)));
  for (const id of started) actions.push({ a: "start", id, via: via() });
  // A schedule runs alongside the other calls, from the start, in most schedules.
  if (r.chance(0.75)) {
    const kinds = (["kill", "pause"] as const).filter((k) => space.faults.has(k));
    const fault = { kind: kinds.length > 0 && r.chance(0.8) ? r.pick(kinds) : ("none" as const), atMs: r.int(300, 1_500) };
    actions.push({ a: "schedule", name: "s0", everyMs: r.pick([200, 300, 500]), lifeMs: r.int(2_500, 4_000), fault });
  }
  const count = r.int(Math.floor(space.maxActions / 2), space.maxActions);
  for (let i = 0; i < count; i++) {
    const open = ids.filter((id) => !cancelled.has(id));
    const roll = r.next();
    if (open.length === 0) break;
    const id = r.pick(open);
    if (!started.has(id)) {
      started.add(id);
      actions.push({ a: "start", id, via: via() });
    }
    if (roll < 0.28) actions.push({ a: "signal", id, tag: `t${tags++}`, via: via() });
    else if (roll < 0.48) actions.push({ a: "update", id, uid: `u${uids++}`, by: r.int(1, 9), via: via() });
    else if (roll < 0.52) {
      actions.push({ a: "cancel", id, via: via() });
      cancelled.add(id);
    } else if (roll < 0.57) {
      const burst = Array.from({ length: r.int(1, 5) }, () => `t${tags++}`);
      actions.push({
        a: "reset",
        id,
        tags: burst,
        before: r.int(0, burst.length),
        uid: `u${uids++}`,
        by: r.int(1, 9),
        slot: r.int(0, engines - 1),
      });
    } else if (roll < 0.69) {
      const plan = relayPlan(
        r,
        id,
        ids,
        renew,
        started,
        cancelled,
        () => `t${tags++}`,
        () => `u${uids++}`,
      );
      const kill =
        space.faults.has("ownerLost") && r.chance(0.5) ? { who: r.pick(["sender", "target"] as const), atMs: r.int(0, 60) } : undefined;
      actions.push({ a: "relay", id: `m${relays++}`, plan, ...(kill === undefined ? {} : { kill }) });
    } else if (roll < 0.74) {
      const id = `p${families++}`;
      const children = Array.from({ length: r.int(1, 3) }, (_, i) => ({
        id: `${id}c${i}`,
        close: r.pick<ClosePolicy>(["terminate", "request-cancel", "abandon"]),
      }));
      const killAtMs = space.faults.has("ownerLost") && r.chance(0.5) ? { killAtMs: r.int(0, 60) } : {};
      actions.push({ a: "family", id, family: { children, then: r.pick(["end", "continue", "reset"] as const) }, ...killAtMs });
    } else if (roll < 0.8) actions.push({ a: "gap", ms: r.int(20, 400) });
    else if (faults.length > 0)
      actions.push(
        fault(
          r,
          r.pick(faults),
          engines,
          leaseMs,
          id,
          () => `t${tags++}`,
          () => `u${uids++}`,
        ),
      );
    if (r.chance(0.5)) actions.push({ a: "gap", ms: r.int(0, 40) });
  }
  return { seed, engines, shards, leaseMs, skews, ids, renew, actions };
}

/**
 * One to four messages, the first to `id`: signals and updates to runs not cancelled, now and then
 * a cancel, and starts (`startWorkflow`, `signalWithStart`) of IDs not started yet, which the relay
 * starts instead of a client. Marks what the plan starts and cancels.
 */
function relayPlan(
  r: Seeded,
  id: string,
  ids: readonly string[],
  renew: Readonly<Record<string, number>>,
  started: Set<string>,
  cancelled: Set<string>,
  tag: () => string,
  uid: () => string,
): Relayed[] {
  const plan: Relayed[] = [];
  const n = r.int(1, 4);
  for (let i = 0; i < n; i++) {
    const fresh = ids.filter((x) => !started.has(x));
    if (fresh.length > 0 && r.chance(0.25)) {
      const to = r.pick(fresh);
      started.add(to);
      const every = renew[to] === undefined ? {} : { every: renew[to] };
      plan.push(r.chance(0.5) ? { op: "startWorkflow", to, ...every } : { op: "signalWithStart", to, tag: tag(), ...every });
      continue;
    }
    const open = ids.filter((x) => started.has(x) && !cancelled.has(x));
    if (open.length === 0) break;
    const to = i === 0 && open.includes(id) ? id : r.pick(open);
    const roll = r.next();
    if (roll < 0.4) plan.push({ op: "signalWorkflow", to, tag: tag() });
    else if (roll < 0.8) plan.push({ op: "updateWorkflow", to, tag: uid(), by: r.int(1, 9) });
    else if (roll < 0.9) plan.push({ op: "signalWithStart", to, tag: tag() });
    else {
      plan.push({ op: "cancelWorkflow", to });
      cancelled.add(to);
    }
  }
  return plan;
}

function fault(
  r: Seeded,
  kind: Exclude<Fault, "skew">,
  engines: number,
  leaseMs: number,
  id: string,
  tag: () => string,
  uid: () => string,
): ClusterAction {
  const slot = r.int(0, engines - 1);
  switch (kind) {
    case "kill":
      return { a: "kill", slot, restartAfterMs: r.pick([0, r.int(50, leaseMs * 2)]) };
    case "pause":
      // Half the pauses outlast the lease, the rest end within it.
      return { a: "pause", slot, ms: r.chance(0.5) ? r.int(Math.round(leaseMs * 1.3), leaseMs * 3) : r.int(50, Math.round(leaseMs / 2)) };
    case "drop":
      if (r.chance(0.5)) return { a: "drop", slot };
      return { a: "dropMidCall", id, tags: Array.from({ length: r.int(1, 6) }, tag), uid: uid(), by: r.int(1, 9), atMs: r.int(0, 25) };
    case "ownerLost":
      return { a: "ownerLost", id, tags: Array.from({ length: r.int(2, 8) }, tag), uid: uid(), by: r.int(1, 9), killAtMs: r.int(-30, 60) };
  }
}

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
