import fc from "fast-check";
import type { CronPick } from "./instants.js";

/**
 * The clock of a flow plan moves in ticks of this many ms; every period, hold, timeout and delay is a
 * whole number of ticks, so every timer falls on a tick the simulation stops at.
 */
export const FTICK = 100;

export type Overlap = "skip" | "buffer-one" | "allow-all" | "cancel-other" | "terminate-other";
export type CatchUp = "one" | "all" | "none";
export const OVERLAPS: readonly Overlap[] = ["skip", "buffer-one", "allow-all", "cancel-other", "terminate-other"];
export const CATCH_UPS: readonly CatchUp[] = ["one", "all", "none"];

/** A schedule of the plan, created once the first engine is open. */
export interface SchedulePick {
  readonly everyMs: number;
  /** A cron spec in a time zone instead of `everyMs`. */
  readonly cron?: CronPick;
  readonly overlap: Overlap;
  readonly catchUp: CatchUp;
  /** How long each run the schedule starts sleeps (a durable timer) before it ends. */
  readonly holdMs: number;
  readonly paused: boolean;
}

/** One step of a limited run: its body ends after `workMs` or hangs until its `AbortSignal` fires. */
export interface LimitedStep {
  readonly body: "ok" | "hang";
  readonly workMs: number;
  readonly timeoutMs: number;
  readonly priority: number;
  readonly fairness: string;
}

export type WindowKey = "k0" | "k1";

/** A heartbeating step: `total` units of work; its first attempt fails after `failAfter` of them. */
export interface BeatPlan {
  readonly total: number;
  readonly failAfter: number;
  readonly fail: "throw" | "stall";
}

export type FlowAction =
  | { readonly a: "advance"; readonly ms: number }
  | { readonly a: "crash"; readonly afterOps: number }
  | { readonly a: "failSync" }
  | { readonly a: "restart" }
  | { readonly a: "down"; readonly ms: number }
  | { readonly a: "pause" | "resume" | "trigger" | "delete"; readonly s: number }
  /** `Schedule.update` with a new interval, overlap and catch-up policy (same workflow and input). */
  | { readonly a: "update"; readonly s: number; readonly everyMs: number; readonly overlap: Overlap; readonly catchUp: CatchUp }
  /** A power loss armed `afterOps` file operations ahead, then `trigger()`: the crash lands inside the trigger. */
  | { readonly a: "crashTrigger"; readonly s: number; readonly afterOps: number }
  | { readonly a: "backfill"; readonly s: number; readonly back: number; readonly len: number }
  | { readonly a: "limited"; readonly n: number; readonly steps: readonly LimitedStep[] }
  | { readonly a: "cancel"; readonly n: number }
  | { readonly a: "batch" | "debounce"; readonly key: WindowKey; readonly ev: number }
  | { readonly a: "await"; readonly n: number }
  | { readonly a: "complete"; readonly n: number; readonly value: number }
  | { readonly a: "fail"; readonly n: number }
  | { readonly a: "beat"; readonly n: number; readonly plan: BeatPlan }
  | { readonly a: "versioned"; readonly n: number }
  /** A run of ID `R<n>` that sleeps `hold` ms, started anew if the ID's last run finished (a retention plan's only start). */
  | { readonly a: "retain"; readonly n: number; readonly hold: number }
  /** `engine.limit` changes the limit's concurrency while the engine runs (its rate stays the plan's); 0: unbounded. */
  | { readonly a: "relimit"; readonly concurrent: number }
  /** Update `bump` of run `D<d>` with update ID `u<u>` (a dedup plan's): the ID may have been applied before. */
  | { readonly a: "dedupUpdate"; readonly d: number; readonly u: number }
  /** Signal `next` to `D<d>`, whose run continues as new on it. */
  | { readonly a: "dedupNext"; readonly d: number };

/** A generated plan: the engine's shape, the flow rules, and the actions and faults in order. */
export interface FlowPlan {
  /** The virtual time the plan starts at (one of `STARTS`). */
  readonly start: number;
  readonly shards: number;
  readonly diskSeed: number;
  /** Payloads encrypted with a key that changes at every open (the old ones kept to decrypt), or plain. */
  readonly codec: "plain" | "rotating";
  /**
   * `Config.retention` and `keepHistory`: set in retention plans alone, which start only `retain`
   * runs, so the runs every other part checks at the end are not removed under it.
   */
  readonly retention?: { readonly ms: number; readonly keepHistory: boolean };
  /** The engine (counted from 1) from which versioned runs run their second version; 0: never. */
  readonly upgradeAt: number;
  /**
   * The engine from which they run their third, which calls `ctx.deprecatePatch` in place of the
   * patch's `if` (0 or absent: never; from `upgradeAt` or before it, the second version never runs).
   * Runs that passed the patched point under the first version may still be in flight then, as
   * when the old runs were not all done.
   */
  readonly deprecateAt?: number;
  /**
   * `Config.idempotencyWindow`, in dedup plans alone (which start only the runs updated with IDs): a
   * half tick off the grid, so no update falls on the window's edge.
   */
  readonly idem?: { readonly windowMs: number };
  readonly schedules: readonly SchedulePick[];
  readonly limit: { readonly concurrent: number; readonly perSecond: number };
  readonly batch: { readonly size: number; readonly timeoutMs: number };
  readonly debounce: { readonly delayMs: number; readonly maxWaitMs: number | undefined };
  readonly actions: readonly FlowAction[];
}

const ticks = (min: number, max: number): fc.Arbitrary<number> => fc.integer({ min, max }).map((n) => n * FTICK);

/** Cron specs whose instants a plan of a few minutes reaches, some of them in the hours a DST transition moves. */
const cronPick: fc.Arbitrary<CronPick> = fc.record({
  expr: fc.constantFrom("* * * * *", "*/2 * * * *", "* 1 * * *", "* 2 * * *", "* 3 * * *", "0-30/3 * * * *"),
  zone: fc.constantFrom("Europe/Paris", "America/New_York", "UTC"),
});

/** Where the virtual clock starts: a plain day, or a minute before a DST transition in Paris or New York. */
export const STARTS: readonly number[] = [
  Date.UTC(2030, 0, 1),
  Date.UTC(2030, 2, 31, 0, 59),
  Date.UTC(2030, 9, 27, 0, 59),
  Date.UTC(2030, 2, 10, 6, 59),
  Date.UTC(2030, 10, 3, 5, 59),
];

const schedulePick: fc.Arbitrary<SchedulePick> = fc.record({
  everyMs: fc.constantFrom(1000, 2000, 3000),
  cron: fc.option(cronPick, { freq: 3, nil: undefined }),
  overlap: fc.constantFrom(...OVERLAPS),
  catchUp: fc.constantFrom(...CATCH_UPS),
  holdMs: ticks(1, 70),
  paused: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
});

const limitedStep: fc.Arbitrary<LimitedStep> = fc.record({
  body: fc.constantFrom("ok" as const, "ok" as const, "hang" as const),
  workMs: ticks(1, 12),
  timeoutMs: ticks(3, 20),
  priority: fc.integer({ min: 0, max: 2 }),
  fairness: fc.constantFrom("a", "b", "c"),
});

const RUN_NUMBERS = 6;

/** Power losses (at a file operation ahead), failed syncs, clean restarts and downtime. */
const faults: ReadonlyArray<fc.WeightedArbitrary<FlowAction>> = [
  { weight: 2, arbitrary: fc.record({ a: fc.constant("crash" as const), afterOps: fc.integer({ min: 0, max: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ a: fc.constant("failSync" as const) }) },
  { weight: 1, arbitrary: fc.record({ a: fc.constant("restart" as const) }) },
  { weight: 2, arbitrary: fc.record({ a: fc.constant("down" as const), ms: ticks(1, 80) }) },
];

const action: fc.Arbitrary<FlowAction> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ a: fc.constant("advance" as const), ms: ticks(1, 25) }) },
  ...faults,
  {
    weight: 3,
    arbitrary: fc.record({
      a: fc.constantFrom("pause" as const, "resume" as const, "trigger" as const),
      s: fc.integer({ min: 0, max: 1 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      a: fc.constant("update" as const),
      s: fc.integer({ min: 0, max: 1 }),
      everyMs: fc.constantFrom(1000, 2000, 3000),
      overlap: fc.constantFrom(...OVERLAPS),
      catchUp: fc.constantFrom(...CATCH_UPS),
    }),
  },
  // A trigger's run starts about five file operations in: these crashes land between the run's start and
  // the schedule's record of it, where the run must still count as running for the overlap policy.
  {
    weight: 3,
    arbitrary: fc.record({
      a: fc.constant("crashTrigger" as const),
      s: fc.constant(0),
      afterOps: fc.integer({ min: 4, max: 6 }),
    }),
  },
  // Only the second schedule is ever deleted, so the first one runs through every plan.
  { weight: 1, arbitrary: fc.record({ a: fc.constant("delete" as const), s: fc.constant(1) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      a: fc.constant("backfill" as const),
      s: fc.integer({ min: 0, max: 1 }),
      back: fc.integer({ min: 0, max: 12 }),
      len: fc.integer({ min: 0, max: 8 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      a: fc.constant("limited" as const),
      n: fc.integer({ min: 0, max: RUN_NUMBERS - 1 }),
      steps: fc.array(limitedStep, { minLength: 1, maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ a: fc.constant("cancel" as const), n: fc.integer({ min: 0, max: RUN_NUMBERS - 1 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      a: fc.constantFrom("batch" as const, "debounce" as const),
      key: fc.constantFrom("k0" as const, "k1" as const),
      ev: fc.integer({ min: 0, max: 40 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ a: fc.constant("await" as const), n: fc.integer({ min: 0, max: 2 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      a: fc.constant("complete" as const),
      n: fc.integer({ min: 0, max: 2 }),
      value: fc.integer({ min: 1, max: 99 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ a: fc.constant("fail" as const), n: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 4, arbitrary: fc.record({ a: fc.constant("versioned" as const), n: fc.integer({ min: 0, max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ a: fc.constant("relimit" as const), concurrent: fc.integer({ min: 0, max: 3 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      a: fc.constant("beat" as const),
      n: fc.integer({ min: 0, max: 2 }),
      plan: fc
        .record({
          total: fc.integer({ min: 1, max: 8 }),
          cut: fc.integer({ min: 0, max: 8 }),
          fail: fc.constantFrom("throw" as const, "stall" as const),
        })
        .map(({ total, cut, fail }) => ({ total, failAfter: Math.min(cut, total - 1), fail })),
    }),
  },
);

/** The actions of a retention plan: runs of a few IDs, ending within a retention or two, among the faults. */
const retentionAction: fc.Arbitrary<FlowAction> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ a: fc.constant("advance" as const), ms: ticks(1, 25) }) },
  ...faults,
  {
    weight: 6,
    arbitrary: fc.record({ a: fc.constant("retain" as const), n: fc.integer({ min: 0, max: 3 }), hold: ticks(0, 30) }),
  },
);

/** The actions of a dedup plan: updates with a few IDs and continues-as-new of two runs, among the faults. */
const dedupAction: fc.Arbitrary<FlowAction> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ a: fc.constant("advance" as const), ms: ticks(1, 30) }) },
  ...faults,
  {
    weight: 12,
    arbitrary: fc.record({ a: fc.constant("dedupUpdate" as const), d: fc.integer({ min: 0, max: 1 }), u: fc.integer({ min: 0, max: 1 }) }),
  },
  { weight: 5, arbitrary: fc.record({ a: fc.constant("dedupNext" as const), d: fc.integer({ min: 0, max: 1 }) }) },
);

/**
 * Plans with every feature mixed in; one in six a retention plan, one in six a dedup plan: fast-check
 * picks the interleaving, and shrinks it.
 */
export function flowPlanArbitrary(): fc.Arbitrary<FlowPlan> {
  return fc.oneof({ weight: 4, arbitrary: mixedPlan() }, { weight: 1, arbitrary: retentionPlan() }, { weight: 1, arbitrary: dedupPlan() });
}

function dedupPlan(): fc.Arbitrary<FlowPlan> {
  return fc
    .record({
      ...shape,
      schedules: fc.constant([]),
      idem: fc.record({ windowMs: fc.constantFrom(550, 1_550, 4_050) }),
      actions: fc.array(dedupAction, { minLength: 15, maxLength: 40 }),
    })
    .map(versioned);
}

/** The shape's pair of versions, as the plan's fields. */
function versioned({
  versions,
  ...p
}: Omit<FlowPlan, "upgradeAt" | "deprecateAt"> & { readonly versions: readonly [number, number] }): FlowPlan {
  return { ...p, upgradeAt: versions[0], deprecateAt: versions[1] };
}

function retentionPlan(): fc.Arbitrary<FlowPlan> {
  return fc
    .record({
      ...shape,
      schedules: fc.constant([]),
      retention: fc.record({ ms: fc.constantFrom(2_000, 5_000, 10_000), keepHistory: fc.boolean() }),
      actions: fc.array(retentionAction, { minLength: 10, maxLength: 40 }),
    })
    .map(versioned);
}

function mixedPlan(): fc.Arbitrary<FlowPlan> {
  return fc
    .record({
      ...shape,
      schedules: fc.array(schedulePick, { minLength: 1, maxLength: 2 }),
      actions: fc.array(action, { minLength: 10, maxLength: 40 }),
    })
    .map(versioned);
}

/** The engine's shape and the flow rules, in every plan. */
const shape = {
  start: fc.constantFrom(...STARTS),
  shards: fc.constantFrom(1, 2, 4),
  diskSeed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  codec: fc.constantFrom("plain" as const, "rotating" as const),
  // [upgradeAt, deprecateAt]: no new version, the patch, the patch then its deprecation soon or late,
  // or the deprecation straight after the first version (whose runs in flight then all stop).
  versions: fc.constantFrom<readonly [number, number]>([0, 0], [2, 0], [3, 0], [2, 3], [2, 4], [3, 4], [0, 2], [0, 3]),
  limit: fc.record({ concurrent: fc.integer({ min: 0, max: 3 }), perSecond: fc.integer({ min: 0, max: 4 }) }),
  batch: fc.record({ size: fc.integer({ min: 1, max: 4 }), timeoutMs: ticks(2, 15) }),
  debounce: fc
    .record({ delayMs: ticks(1, 8), extra: fc.option(ticks(0, 10), { nil: undefined }) })
    .map(({ delayMs, extra }) => ({ delayMs, maxWaitMs: extra === undefined ? undefined : delayMs + extra })),
};

export function flowActionText(x: FlowAction): string {
  switch (x.a) {
    case "advance":
    case "down":
      return `${x.a} ${x.ms}ms`;
    case "crash":
      return `crash after ${x.afterOps} file operations`;
    case "failSync":
    case "restart":
      return x.a;
    case "pause":
    case "resume":
    case "trigger":
    case "delete":
      return `${x.a} s${x.s}`;
    case "update":
      return `update s${x.s} to every ${x.everyMs}ms, overlap ${x.overlap}, catch-up ${x.catchUp}`;
    case "crashTrigger":
      return `trigger s${x.s} with a crash after ${x.afterOps} file operations`;
    case "backfill":
      return `backfill s${x.s} from ${x.back} periods back, ${x.len} periods long`;
    case "limited":
      return `start L${x.n} ${JSON.stringify(x.steps)}`;
    case "cancel":
      return `cancel L${x.n}`;
    case "batch":
    case "debounce":
      return `${x.a} ${x.key} e${x.ev}`;
    case "await":
      return `start T${x.n}`;
    case "complete":
      return `complete T${x.n} with ${x.value}`;
    case "fail":
      return `fail T${x.n}`;
    case "versioned":
      return `start P${x.n}`;
    case "beat":
      return `start B${x.n} ${JSON.stringify(x.plan)}`;
    case "relimit":
      return `limit concurrent ${x.concurrent}`;
    case "retain":
      return `start R${x.n} holding ${x.hold}ms`;
    case "dedupUpdate":
      return `update D${x.d} with ID u${x.u}`;
    case "dedupNext":
      return `signal next to D${x.d}`;
  }
}

export function flowPlanText(p: FlowPlan): string {
  const head = `\n  start ${new Date(p.start).toISOString()}, shards ${p.shards}, disk seed ${p.diskSeed}, codec ${p.codec}${p.retention === undefined ? "" : `, retention ${JSON.stringify(p.retention)}`}${p.idem === undefined ? "" : `, idempotency window ${p.idem.windowMs}ms`}, upgrade at engine ${p.upgradeAt}, deprecate at engine ${p.deprecateAt ?? 0}, limit ${JSON.stringify(p.limit)}, batch ${JSON.stringify(p.batch)}, debounce ${JSON.stringify(p.debounce)}`;
  const schedules = p.schedules.map((s, i) => `\n  schedule s${i}: ${JSON.stringify(s)}`).join("");
  return head + schedules + p.actions.map((x, i) => `\n  #${i} ${flowActionText(x)}`).join("");
}
