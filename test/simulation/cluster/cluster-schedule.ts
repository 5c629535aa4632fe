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
  /** `run.terminate` through a non-owner (asked again until answered), then again if `again` (refused: it ended); the owner SIGKILLed `killAtMs` after the first. */
  | { readonly a: "terminate"; readonly id: string; readonly slot: number; readonly again: boolean; readonly killAtMs?: number }
  /**
   * `engine.signalWithStart` (`call` signal, `tag` its signal's) or `engine.updateWithStart` (`call`
   * update, `tag` its update ID) through a non-owner, asked again until answered; the owner SIGKILLed
   * `killAtMs` after the first attempt. The start of the ID's run when it has none yet.
   */
  | {
      readonly a: "withStart";
      readonly id: string;
      readonly call: "signal" | "update";
      readonly tag: string;
      readonly by: number;
      readonly slot: number;
      readonly killAtMs?: number;
    }
  /** A schedule with operations from other processes while its holder is struck: see `cluster-schedule-ops.ts`. */
  | ScheduleOpsAction
  /** Events of a batch key sent through non-owners while its shard's owner may be struck: see `cluster-batches.ts`. */
  | BatchAction
  | { readonly a: "gap"; readonly ms: number };

/**
 * A schedule every `everyMs` whose runs last `holdMs`, under overlap `skip` or `buffer-one` (catch-up
 * `one`), created through any process. `backfillAtMs` after its creation, a backfill of
 * `[backfill.from, backfill.to]` ms before the creation; at `updateAtMs` an update to every
 * `newEveryMs`; at `triggerAtMs` a trigger; at `lifeMs` a pause, then (once no run of it goes on)
 * another trigger, then a delete, the holder of its shard SIGKILLed `killAfterDeleteMs` after the
 * delete when set. `fault.atMs` after the creation the holder is SIGKILLed or stopped past its lease.
 */
export interface ScheduleOpsAction {
  readonly a: "scheduleOps";
  readonly name: string;
  readonly everyMs: number;
  readonly newEveryMs: number;
  readonly overlap: "skip" | "buffer-one";
  readonly holdMs: number;
  readonly lifeMs: number;
  readonly triggerAtMs: number;
  readonly backfillAtMs: number;
  readonly backfill: { readonly from: number; readonly to: number };
  readonly updateAtMs: number;
  readonly fault: { readonly kind: "kill" | "pause" | "none"; readonly atMs: number };
  readonly killAfterDeleteMs?: number;
}

/**
 * `events` of batch `key` (`Batch.of(size, timeoutMs)`), each sent through a non-owner `afterMs`
 * after the previous one was answered, and asked again until it is answered, with its event ID
 * (`withId`) or without one; the owner of the key's shard SIGKILLed `killAtMs` after the first attempt.
 */
export interface BatchAction {
  readonly a: "batch";
  readonly key: string;
  readonly size: number;
  readonly timeoutMs: number;
  readonly events: readonly { readonly tag: string; readonly withId: boolean; readonly afterMs: number }[];
  readonly slot: number;
  readonly killAtMs?: number;
}

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
  // A schedule worked on from other processes, in half the schedules.
  if (r.chance(0.5)) actions.push(scheduleOps(r, space));
  const count = r.int(Math.floor(space.maxActions / 2), space.maxActions);
  for (let i = 0; i < count; i++) {
    const open = ids.filter((id) => !cancelled.has(id));
    const roll = r.next();
    if (open.length === 0) break;
    const id = r.pick(open);
    // A with-start call is the start of an ID that has none yet.
    const withStart = roll >= 0.48 && roll < 0.57;
    if (!started.has(id)) {
      started.add(id);
      if (!withStart) actions.push({ a: "start", id, via: via() });
    }
    const killAtMs = (): { killAtMs?: number } => (space.faults.has("ownerLost") && r.chance(0.5) ? { killAtMs: r.int(0, 60) } : {});
    if (roll < 0.24) actions.push({ a: "signal", id, tag: `t${tags++}`, via: via() });
    else if (roll < 0.4) actions.push({ a: "update", id, uid: `u${uids++}`, by: r.int(1, 9), via: via() });
    else if (roll < 0.43) {
      actions.push({ a: "cancel", id, via: via() });
      cancelled.add(id);
    } else if (roll < 0.48) {
      actions.push({ a: "terminate", id, slot: r.int(0, engines - 1), again: r.chance(0.5), ...killAtMs() });
      cancelled.add(id);
    } else if (withStart) {
      const call = r.pick(["signal", "update"] as const);
      const tag = call === "signal" ? `t${tags++}` : `u${uids++}`;
      actions.push({ a: "withStart", id, call, tag, by: r.int(1, 9), slot: r.int(0, engines - 1), ...killAtMs() });
    } else if (roll < 0.6) {
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
    } else if (roll < 0.7) {
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
    } else if (roll < 0.75) {
      const id = `p${families++}`;
      const children = Array.from({ length: r.int(1, 3) }, (_, i) => ({
        id: `${id}c${i}`,
        close: r.pick<ClosePolicy>(["terminate", "request-cancel", "abandon"]),
      }));
      actions.push({ a: "family", id, family: { children, then: r.pick(["end", "continue", "reset"] as const) }, ...killAtMs() });
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
  // Drawn from a generator of its own, so that every other action of a seed stays as it was before batches.
  const b = new Seeded(seed ^ 0x5eed);
  if (b.chance(0.5)) actions.splice(b.int(0, actions.length), 0, batch(b, engines, space));
  return { seed, engines, shards, leaseMs, skews, ids, renew, actions };
}

/**
 * Two to six events of one key, of which some fill their batch and some wait for its timeout: the
 * waits between events are short, or longer than the timeout.
 */
function batch(b: Seeded, engines: number, space: ScheduleSpace): BatchAction {
  const key = `k${b.int(0, 999)}`;
  const timeoutMs = b.int(300, 800);
  const events = Array.from({ length: b.int(2, 6) }, (_, i) => ({
    tag: `${key}e${i}`,
    withId: b.chance(0.5),
    afterMs: i === 0 ? 0 : b.chance(0.25) ? b.int(timeoutMs, timeoutMs + 300) : b.int(0, 60),
  }));
  const killAtMs = b.int(0, 60);
  return {
    a: "batch",
    key,
    size: b.int(3, 5),
    timeoutMs,
    events,
    slot: b.int(0, engines - 1),
    ...(space.faults.has("ownerLost") && b.chance(0.5) ? { killAtMs } : {}),
  };
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

/** The schedule worked on from other processes: its spec, the times of its operations and its faults. */
function scheduleOps(r: Seeded, space: ScheduleSpace): ScheduleOpsAction {
  const everyMs = r.pick([250, 400]);
  const lifeMs = r.int(2_500, 3_500);
  const kinds = (["kill", "pause"] as const).filter((k) => space.faults.has(k));
  const fault = { kind: kinds.length > 0 && r.chance(0.8) ? r.pick(kinds) : ("none" as const), atMs: r.int(300, lifeMs - 300) };
  const before = r.int(3, 8) * everyMs;
  return {
    a: "scheduleOps",
    name: "s1",
    everyMs,
    newEveryMs: r.pick([300, 350, 500]),
    overlap: r.pick(["skip", "buffer-one"] as const),
    // Shorter than the interval, or longer: then the overlap policy skips or buffers live instants.
    holdMs: r.pick([r.int(50, everyMs - 100), r.int(everyMs, everyMs * 2)]),
    lifeMs,
    triggerAtMs: r.int(200, lifeMs - 200),
    backfillAtMs: r.int(200, lifeMs - 200),
    backfill: { from: before + r.int(1, 3) * everyMs, to: before },
    updateAtMs: r.int(Math.round(lifeMs / 3), Math.round((lifeMs * 2) / 3)),
    fault,
    ...(space.faults.has("kill") && r.chance(0.5) ? { killAfterDeleteMs: r.int(0, 40) } : {}),
  };
}
