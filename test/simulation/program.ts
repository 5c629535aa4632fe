import fc from "fast-check";

/**
 * What a generated workflow does. One generic workflow class interprets it (`sim-workflow.ts`), and
 * the program is the run's input, so a replay interprets the same program the same way.
 *
 * Durations are whole multiples of {@link TICK} milliseconds, so every timer falls on a tick of the
 * simulated clock and the reference model can say which event comes first.
 */
export interface Program {
  readonly body: readonly Instr[];
  /** The body catches `CancelledError`, runs a clean-up step and finishes `ok` on purpose. */
  readonly catchCancel: boolean;
  /** After the body, the run continues as new with this program. */
  readonly next?: Program;
}

export type StepBehaviour = "ok" | "flaky" | "fail" | "hang";

export type Instr =
  | {
      readonly k: "step";
      readonly b: StepBehaviour;
      /** For `flaky`: the step's executions fail until this many have run (across restarts). */
      readonly fails: number;
      /** The retry policy's attempts, and the first back-off (doubling after each attempt). */
      readonly tries: number;
      readonly backoff: number;
      /** Each attempt ends with `TimeoutError` after {@link STEP_LIMIT} ms, or without heartbeats for that long. */
      readonly limit?: "timeout" | "heartbeat";
    }
  | { readonly k: "sleep"; readonly ms: number }
  | { readonly k: "wait"; readonly name: MailboxName; readonly timeout?: number }
  | { readonly k: "cond"; readonly flag: Flag; readonly timeout?: number }
  | { readonly k: "child"; readonly prog: Program; readonly wait: boolean; readonly close: ClosePolicy }
  /** A step whose body starts another workflow through the engine. */
  | { readonly k: "spawn"; readonly prog: Program };

export type MailboxName = "a" | "b";
export type Flag = "x" | "y";
export type ClosePolicy = "terminate" | "request-cancel" | "abandon";

export const TICK = 10;
export const STEP_LIMIT = 30;

/** What a generated program returns. */
export interface SimResult {
  readonly obs: readonly string[];
  readonly total: number;
}

/** The workflow IDs clients start. */
export const START_IDS = ["w1", "w2", "w3"] as const;
/** IDs clients also signal, update, query, cancel and terminate: a child's, when the first instruction of w1 starts one. */
export const TARGET_IDS = [...START_IDS, "w1-1-c0"] as const;

export interface IdPolicyChoice {
  readonly running?: "fail" | "use-existing" | "terminate-existing";
  readonly finished?: "allow" | "allow-if-failed" | "refuse";
}

export type Action =
  | { readonly a: "start"; readonly id: string; readonly prog: Program; readonly policy?: IdPolicyChoice }
  | { readonly a: "signal"; readonly id: string; readonly name: MailboxName | "set"; readonly value: number | Flag }
  | { readonly a: "update"; readonly id: string; readonly n: number; readonly step: boolean; readonly uid?: string }
  | { readonly a: "query"; readonly id: string }
  | { readonly a: "cancel"; readonly id: string }
  | { readonly a: "terminate"; readonly id: string }
  | { readonly a: "advance"; readonly ms: number }
  /** A power loss `afterOps` file-layer operations from now (0: between this action and the next). */
  | { readonly a: "crash"; readonly afterOps: number }
  /** The next sync of a log segment fails: the shard goes fatal; the engine is then reopened on what a power loss would leave. */
  | { readonly a: "failSync" }
  /** A clean shutdown, then a reopen of the same data. */
  | { readonly a: "restart" };

export interface Schedule {
  readonly shards: number;
  /** Runs kept in memory before parking (small values make runs replay when woken). */
  readonly cache: number;
  /** Size of a log segment: small ones roll over often, large ones hold batches that span pages. */
  readonly segmentBytes: number;
  /** Seeds the power-loss images (which unsynced writes survive, where the last one tears). */
  readonly diskSeed: number;
  readonly actions: readonly Action[];
}

// ---- generation ----

const ms = (values: number[]): fc.Arbitrary<number> => fc.constantFrom(...values);

const stepArb: fc.Arbitrary<Instr> = fc.record(
  {
    k: fc.constant("step" as const),
    b: fc.constantFrom<StepBehaviour>("ok", "flaky", "fail", "hang"),
    fails: fc.integer({ min: 1, max: 3 }),
    tries: fc.integer({ min: 1, max: 4 }),
    backoff: ms([10, 20]),
    limit: fc.constantFrom<"timeout" | "heartbeat">("timeout", "heartbeat"),
  },
  { requiredKeys: ["k", "b", "fails", "tries", "backoff"] },
);

const leafArb: fc.Arbitrary<Instr> = fc.oneof(
  { weight: 4, arbitrary: stepArb },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("sleep" as const), ms: ms([10, 50, 100]) }) },
  {
    weight: 2,
    arbitrary: fc.record(
      { k: fc.constant("wait" as const), name: fc.constantFrom<MailboxName>("a", "b"), timeout: ms([50, 100]) },
      { requiredKeys: ["k", "name"] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      { k: fc.constant("cond" as const), flag: fc.constantFrom<Flag>("x", "y"), timeout: ms([50, 100]) },
      { requiredKeys: ["k", "flag"] },
    ),
  },
);

/** A program of leaf instructions only: what children and spawned workflows run. */
const leafProgramArb: fc.Arbitrary<Program> = fc.record({
  body: fc.array(leafArb, { minLength: 0, maxLength: 3 }),
  catchCancel: fc.boolean(),
});

/** Which instructions programs may use: leaving one out shows the bugs that others hide. */
export interface ProgramSpace {
  /** Steps that start another workflow through the engine. */
  readonly spawn: boolean;
}

export const FULL_SPACE: ProgramSpace = { spawn: true };

function instrArbitrary(space: ProgramSpace): fc.Arbitrary<Instr> {
  return fc.oneof(
    { weight: 9, arbitrary: leafArb },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant("child" as const),
        prog: leafProgramArb,
        wait: fc.boolean(),
        close: fc.constantFrom<ClosePolicy>("terminate", "request-cancel", "abandon"),
      }),
    },
    { weight: space.spawn ? 1 : 0, arbitrary: fc.record({ k: fc.constant("spawn" as const), prog: leafProgramArb }) },
  );
}

function programArbitrary(space: ProgramSpace): fc.Arbitrary<Program> {
  return fc.record(
    {
      body: fc.array(instrArbitrary(space), { minLength: 0, maxLength: 4 }),
      catchCancel: fc.boolean(),
      next: leafProgramArb,
    },
    { requiredKeys: ["body", "catchCancel"] },
  );
}

const policyArb: fc.Arbitrary<IdPolicyChoice> = fc.record(
  {
    running: fc.constantFrom<NonNullable<IdPolicyChoice["running"]>>("fail", "use-existing", "terminate-existing"),
    finished: fc.constantFrom<NonNullable<IdPolicyChoice["finished"]>>("allow", "allow-if-failed", "refuse"),
  },
  { requiredKeys: [] },
);

const startIdArb = fc.constantFrom(...START_IDS);
const targetIdArb = fc.constantFrom(...TARGET_IDS);

function actionArbitrary(space: ProgramSpace): fc.Arbitrary<Action> {
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record(
        { a: fc.constant("start" as const), id: startIdArb, prog: programArbitrary(space), policy: policyArb },
        { requiredKeys: ["a", "id", "prog"] },
      ),
    },
    {
      weight: 4,
      arbitrary: fc.oneof(
        fc.record({
          a: fc.constant("signal" as const),
          id: targetIdArb,
          name: fc.constantFrom<MailboxName>("a", "b"),
          value: fc.integer({ min: 1, max: 3 }),
        }),
        fc.record({
          a: fc.constant("signal" as const),
          id: targetIdArb,
          name: fc.constant("set" as const),
          value: fc.constantFrom<Flag>("x", "y"),
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.record(
        {
          a: fc.constant("update" as const),
          id: targetIdArb,
          n: fc.integer({ min: -1, max: 3 }),
          step: fc.boolean(),
          uid: fc.constantFrom("u1", "u2"),
        },
        { requiredKeys: ["a", "id", "n", "step"] },
      ),
    },
    { weight: 1, arbitrary: fc.record({ a: fc.constant("query" as const), id: targetIdArb }) },
    { weight: 2, arbitrary: fc.record({ a: fc.constant("cancel" as const), id: targetIdArb }) },
    { weight: 1, arbitrary: fc.record({ a: fc.constant("terminate" as const), id: targetIdArb }) },
    { weight: 5, arbitrary: fc.record({ a: fc.constant("advance" as const), ms: fc.integer({ min: 1, max: 12 }).map((n) => n * TICK) }) },
    {
      weight: 2,
      arbitrary: fc.record({ a: fc.constant("crash" as const), afterOps: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 })) }),
    },
    { weight: 1, arbitrary: fc.record({ a: fc.constant("failSync" as const) }) },
    { weight: 1, arbitrary: fc.record({ a: fc.constant("restart" as const) }) },
  );
}

/** Schedules: a small engine configuration and up to 24 actions. */
export function scheduleArbitrary(space: ProgramSpace = FULL_SPACE): fc.Arbitrary<Schedule> {
  return fc
    .record({
      shards: fc.integer({ min: 1, max: 3 }),
      cache: fc.constantFrom(1, 2, 1000),
      segmentBytes: fc.constantFrom(4096, 65536),
      diskSeed: fc.integer({ min: 0, max: 0x7fffffff }),
      actions: fc.noBias(fc.array(actionArbitrary(space), { minLength: 1, maxLength: 24, size: "max" })),
    })
    .map((x) => withText(x));
}

// ---- printing ----

/** Makes fast-check print a schedule as readable lines instead of one long object. */
function withText(s: Schedule): Schedule {
  Object.defineProperty(s, fc.toStringMethod, { value: () => scheduleText(s), enumerable: false });
  return s;
}

export function scheduleText(s: Schedule): string {
  const lines = [`shards ${s.shards}, cache ${s.cache}, segments of ${s.segmentBytes} bytes, disk seed ${s.diskSeed}`];
  s.actions.forEach((action, i) => lines.push(`  ${String(i).padStart(2)}. ${actionText(action)}`));
  return `\n${lines.join("\n")}\n`;
}

export function actionText(x: Action): string {
  switch (x.a) {
    case "start":
      return `start ${x.id}${x.policy && Object.keys(x.policy).length > 0 ? ` ${JSON.stringify(x.policy)}` : ""} ${programText(x.prog)}`;
    case "signal":
      return `signal ${x.id} ${x.name}=${x.value}`;
    case "update":
      return `update ${x.id} add(${x.n}${x.step ? ", with a step" : ""})${x.uid ? ` id ${x.uid}` : ""}`;
    case "query":
    case "cancel":
    case "terminate":
      return `${x.a} ${x.id}`;
    case "advance":
      return `advance ${x.ms}ms`;
    case "crash":
      return x.afterOps === 0 ? "power loss" : `power loss after ${x.afterOps} file operations`;
    case "failSync":
      return "the next segment sync fails";
    case "restart":
      return "clean restart";
  }
}

export function programText(p: Program): string {
  const body = p.body.map(instrText).join("; ");
  return `{ ${body}${p.catchCancel ? " | catches cancel" : ""}${p.next ? ` | then continue as new ${programText(p.next)}` : ""} }`;
}

function instrText(i: Instr): string {
  switch (i.k) {
    case "step": {
      const what = i.b === "flaky" ? `fails ${i.fails}x` : i.b;
      const limit = i.limit === undefined ? "" : i.limit === "timeout" ? `, timeout ${STEP_LIMIT}ms` : `, heartbeat ${STEP_LIMIT}ms`;
      return `step(${what}, ${i.tries} tries, backoff ${i.backoff}ms${limit})`;
    }
    case "sleep":
      return `sleep ${i.ms}ms`;
    case "wait":
      return `waitFor ${i.name}${i.timeout ? ` within ${i.timeout}ms` : ""}`;
    case "cond":
      return `condition ${i.flag}${i.timeout ? ` within ${i.timeout}ms` : ""}`;
    case "child":
      return `${i.wait ? "executeChild" : "startChild"}(${i.close}) ${programText(i.prog)}`;
    case "spawn":
      return `step starting workflow ${programText(i.prog)}`;
  }
}

/** The ID of the child that instruction `pc` of run `runId` of `id` starts. */
export const childId = (id: string, runId: number, pc: number): string => `${id}-${runId}-c${pc}`;
/** The ID of the workflow that the spawning step at `pc` of run `runId` of `id` starts. */
export const spawnId = (id: string, runId: number, pc: number): string => `${id}-${runId}-s${pc}`;
