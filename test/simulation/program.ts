import fc from "fast-check";
import {
  attrsArb,
  burstArb,
  featureCallArbs,
  handOffArb,
  nextAttrsArb,
  replacedParentArb,
  resetParentArb,
  updateAgainArb,
  sendArb,
  tagArb,
} from "./program-features.js";

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
  /**
   * With `catchCancel`: after the clean-up the run waits on for mailbox `b` (with no timeout), so a
   * second cancellation would end it `cancelled`; a close policy must ask it once.
   */
  readonly linger?: boolean;
  /** After the body, the run continues as new with this program. */
  readonly next?: Program;
  /** The search attributes `continueAsNew` gives the next run instead of carrying this run's: `{ tag }`, or `{}` for `none`. */
  readonly nextAttrs?: Tag | "none";
  /**
   * Set by whoever starts the run, never generated: names its children and messages, the same in
   * every run that replays or resets this input, different for every start.
   */
  readonly epoch?: string;
  /** Set by a run that continues as new: what its code observed, so the next run's input shows what was consumed. */
  readonly before?: readonly string[];
  /** Set by a parent on its child's input: the child's close policy, so the checks know it from the child alone. */
  readonly close?: ClosePolicy;
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
  /** `ctx.sleepUntil(t)`, `t` the first multiple of {@link UNTIL_GRID} ms at least `ms` after `ctx.now()`. */
  | { readonly k: "until"; readonly ms: number }
  | { readonly k: "wait"; readonly name: MailboxName; readonly timeout?: number }
  | { readonly k: "cond"; readonly flag: Flag; readonly timeout?: number }
  /** `timeout`: the child is started with one (only a child waited for), and closed by its policy when it runs out. */
  /** `exec`: waited for through `ctx.executeChild` instead of `startChild` and the handle's `result()`. */
  | {
      readonly k: "child";
      readonly prog: Program;
      readonly wait: boolean;
      readonly close: ClosePolicy;
      readonly timeout?: number;
      readonly exec?: boolean;
    }
  /**
   * `ctx.attributes()`, observed as the tag it holds; `ctx.random()`, `ctx.uuid()` and
   * `ctx.journalSize()`, which every replay of the run must see as its first execution did.
   */
  | { readonly k: "look" }
  /** A step whose body starts another workflow through the engine. */
  | { readonly k: "spawn"; readonly prog: Program }
  /** `ctx.setAttributes({ tag })`. */
  | { readonly k: "attrs"; readonly tag: Tag }
  /** `ctx.removeAttributes("tag")`. */
  | { readonly k: "unattrs" }
  /** A message to another workflow: `ctx.signalWorkflow`, `cancelWorkflow`, `updateWorkflow`, `startWorkflow`, `signalWithStart`. */
  | SendInstr;

export type SendInstr =
  | { readonly k: "send"; readonly op: "signal" | "cancel"; readonly to: StartId }
  | { readonly k: "send"; readonly op: "update"; readonly to: StartId; readonly n: number }
  | { readonly k: "send"; readonly op: "start"; readonly to: StartId; readonly prog: Program; readonly running: RunningPolicy }
  | { readonly k: "send"; readonly op: "sws"; readonly to: StartId; readonly prog: Program };

export type RunningPolicy = "fail" | "use-existing" | "terminate-existing";
/** The value of the one search attribute programs set, `tag`. */
export type Tag = "p" | "q";

export type MailboxName = "a" | "b";
export type Flag = "x" | "y";
export type ClosePolicy = "terminate" | "request-cancel" | "abandon";

export const TICK = 10;
/** The simulated clock's time when a schedule begins. */
export const START_TIME = Date.UTC(2030, 0, 1);
/** The grid `sleepUntil` deadlines fall on: a whole number of ticks, so a deadline is on a tick too. */
export const UNTIL_GRID = 50;
/** The time a `sleepUntil` instruction of `ms` sleeps until, from `now`. */
export const untilTime = (now: number, ms: number): number => Math.ceil((now + ms) / UNTIL_GRID) * UNTIL_GRID;
export const STEP_LIMIT = 30;

/** What a generated program returns. */
export interface SimResult {
  readonly obs: readonly string[];
  readonly total: number;
}

/** The workflow IDs clients start. */
export const START_IDS = ["w1", "w2", "w3"] as const;
export type StartId = (typeof START_IDS)[number];
/** IDs clients also signal, update, query, cancel and terminate: a child's, when the first instruction of w1 starts one. */
export const TARGET_IDS = [...START_IDS, "w1-1-c0"] as const;

export interface IdPolicyChoice {
  readonly running?: "fail" | "use-existing" | "terminate-existing";
  readonly finished?: "allow" | "allow-if-failed" | "refuse";
}

export type Action =
  /**
   * `late`: of the workflow type registered only after the engine opened (`engine.register`).
   * `watch`: `run.started()` is called before the start, and answered once the ID has a run.
   */
  | {
      readonly a: "start";
      readonly id: string;
      readonly prog: Program;
      readonly policy?: IdPolicyChoice;
      readonly tag?: Tag;
      readonly late?: boolean;
      readonly watch?: boolean;
    }
  /** A mailbox signal's value is made unique when the call is made (see {@link signalValue}), so each delivery can be traced. */
  | { readonly a: "signal"; readonly id: string; readonly name: MailboxName | "set"; readonly value: number | Flag }
  /** `handle`: sent with `run.startUpdate`, whose handle's `result()` gives the answer. */
  | {
      readonly a: "update";
      readonly id: string;
      readonly n: number;
      readonly step: boolean;
      readonly uid?: string;
      readonly handle?: boolean;
    }
  | { readonly a: "sws"; readonly id: StartId; readonly prog: Program }
  | { readonly a: "uws"; readonly id: StartId; readonly prog: Program; readonly n: number; readonly uid?: string }
  /** `run.reset(name)`, `name` the `step`-th step (cyclically) of the run's journal when the call is made. */
  | { readonly a: "reset"; readonly id: string; readonly step: number }
  /** Client calls issued together, racing each other and the engine's work; only the journal-level properties judge them. */
  | { readonly a: "burst"; readonly calls: readonly ClientCall[]; readonly tick: boolean }
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

/** The actions that are one client call. */
export type ClientCall = Extract<Action, { a: "start" | "signal" | "update" | "query" | "cancel" | "terminate" | "sws" | "uws" | "reset" }>;

/** The unique value a mailbox signal sent by action `step` carries (a flag signal keeps its flag). */
export const signalValue = (step: number, sub: number, v: number | Flag): number | Flag =>
  typeof v === "number" ? 1000 * (step + 1) + 10 * sub + v : v;

/** The update ID a client update of action `step` uses when the schedule names none. */
export const updateId = (step: number, sub: number, uid: string | undefined): string => uid ?? `c${step}.${sub}`;

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
  { weight: 1, arbitrary: fc.record({ k: fc.constant("until" as const), ms: ms([10, 60]) }) },
  { weight: 1, arbitrary: fc.constant<Instr>({ k: "look" }) },
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
const leafProgramArb: fc.Arbitrary<Program> = fc
  .record({
    body: fc.array(leafArb, { minLength: 0, maxLength: 3 }),
    catchCancel: fc.boolean(),
    linger: fc.boolean(),
  })
  .map(({ linger, ...p }): Program => (linger && p.catchCancel ? { ...p, linger } : p));

/** What a run continues as new with: leaf instructions, attributes and messages. */
const nextProgramArb: fc.Arbitrary<Program> = fc.record({
  body: fc.array(
    fc.oneof({ weight: 6, arbitrary: leafArb }, { weight: 1, arbitrary: attrsArb }, { weight: 2, arbitrary: sendArb(leafProgramArb) }),
    { minLength: 0, maxLength: 3 },
  ),
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
      weight: 3,
      arbitrary: fc
        .record({
          k: fc.constant("child" as const),
          prog: leafProgramArb,
          wait: fc.boolean(),
          close: fc.constantFrom<ClosePolicy>("terminate", "request-cancel", "abandon"),
          timeout: fc.option(ms([30, 80]), { nil: undefined, freq: 3 }),
          exec: fc.boolean(),
        })
        .map(({ timeout, exec, ...i }): Instr => {
          if (!i.wait) return i;
          if (timeout !== undefined) return { ...i, timeout };
          return exec ? { ...i, exec } : i;
        }),
    },
    { weight: space.spawn ? 1 : 0, arbitrary: fc.record({ k: fc.constant("spawn" as const), prog: leafProgramArb }) },
    { weight: 1, arbitrary: attrsArb },
    { weight: 3, arbitrary: sendArb(leafProgramArb) },
  );
}

function programArbitrary(space: ProgramSpace): fc.Arbitrary<Program> {
  return fc.record(
    {
      body: fc.array(instrArbitrary(space), { minLength: 0, maxLength: 4 }),
      catchCancel: fc.boolean(),
      next: nextProgramArb,
      nextAttrs: nextAttrsArb,
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

function callArbitrary(space: ProgramSpace): fc.Arbitrary<ClientCall> {
  const prog = programArbitrary(space);
  const [sws, uws, reset] = featureCallArbs(prog) as [fc.Arbitrary<ClientCall>, fc.Arbitrary<ClientCall>, fc.Arbitrary<ClientCall>];
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record(
        {
          a: fc.constant("start" as const),
          id: startIdArb,
          prog,
          policy: policyArb,
          tag: tagArb,
          late: fc.constant(true),
          watch: fc.constant(true),
        },
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
          handle: fc.constant(true),
        },
        { requiredKeys: ["a", "id", "n", "step"] },
      ),
    },
    { weight: 1, arbitrary: fc.record({ a: fc.constant("query" as const), id: targetIdArb }) },
    { weight: 2, arbitrary: fc.record({ a: fc.constant("cancel" as const), id: targetIdArb }) },
    { weight: 1, arbitrary: fc.record({ a: fc.constant("terminate" as const), id: targetIdArb }) },
    { weight: 1, arbitrary: sws },
    { weight: 1, arbitrary: uws },
    { weight: 3, arbitrary: reset },
  );
}

function actionArbitrary(space: ProgramSpace): fc.Arbitrary<Action> {
  const call = callArbitrary(space);
  return fc.oneof(
    { weight: 19, arbitrary: call },
    { weight: 5, arbitrary: fc.record({ a: fc.constant("advance" as const), ms: fc.integer({ min: 1, max: 12 }).map((n) => n * TICK) }) },
    {
      weight: 2,
      arbitrary: fc.record({ a: fc.constant("crash" as const), afterOps: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 })) }),
    },
    { weight: 1, arbitrary: fc.record({ a: fc.constant("failSync" as const) }) },
    { weight: 1, arbitrary: fc.record({ a: fc.constant("restart" as const) }) },
    { weight: 2, arbitrary: burstArb(call) },
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
      actions: fc
        .noBias(
          fc.array(
            fc.oneof(
              { weight: 40, arbitrary: actionArbitrary(space).map((a) => [a]) },
              { weight: 2, arbitrary: handOffArb(leafProgramArb) },
              { weight: 2, arbitrary: replacedParentArb(leafProgramArb) },
              { weight: 1, arbitrary: resetParentArb() },
              { weight: 1, arbitrary: updateAgainArb() },
            ),
            { minLength: 1, maxLength: 24, size: "max" },
          ),
        )
        .map((groups) => groups.flat().slice(0, 24)),
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
      return `${x.watch === true ? "started() then " : ""}start ${x.late === true ? "(registered late) " : ""}${x.id}${x.policy && Object.keys(x.policy).length > 0 ? ` ${JSON.stringify(x.policy)}` : ""}${x.tag ? ` tag ${x.tag}` : ""} ${programText(x.prog)}`;
    case "sws":
      return `signalWithStart ${x.id} a ${programText(x.prog)}`;
    case "uws":
      return `updateWithStart ${x.id} add(${x.n})${x.uid ? ` id ${x.uid}` : ""} ${programText(x.prog)}`;
    case "reset":
      return `reset ${x.id} to its step #${x.step}`;
    case "burst":
      return `at once${x.tick ? " with the next tick" : ""}: ${x.calls.map(actionText).join(" || ")}`;
    case "signal":
      return `signal ${x.id} ${x.name}=${x.value}`;
    case "update":
      return `${x.handle === true ? "startUpdate" : "update"} ${x.id} add(${x.n}${x.step ? ", with a step" : ""})${x.uid ? ` id ${x.uid}` : ""}`;
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
  const attrs = p.nextAttrs === undefined ? "" : ` with attributes ${p.nextAttrs === "none" ? "{}" : `{ tag: ${p.nextAttrs} }`}`;
  const caught = p.catchCancel ? ` | catches cancel${p.linger === true ? " and waits for b" : ""}` : "";
  return `{ ${body}${caught}${p.next ? ` | then continue as new${attrs} ${programText(p.next)}` : ""} }`;
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
    case "until":
      return `sleepUntil the ${UNTIL_GRID}ms mark ${i.ms}ms on`;
    case "wait":
      return `waitFor ${i.name}${i.timeout ? ` within ${i.timeout}ms` : ""}`;
    case "cond":
      return `condition ${i.flag}${i.timeout ? ` within ${i.timeout}ms` : ""}`;
    case "child":
      return `${i.exec === true ? "executeChild" : i.wait ? "startChild, result" : "startChild"}(${i.close}${i.timeout === undefined ? "" : `, timeout ${i.timeout}ms`}) ${programText(i.prog)}`;
    case "look":
      return "look at attributes(), random(), uuid(), journalSize()";
    case "spawn":
      return `step starting workflow ${programText(i.prog)}`;
    case "attrs":
      return `setAttributes tag=${i.tag}`;
    case "unattrs":
      return "removeAttributes tag";
    case "send":
      switch (i.op) {
        case "signal":
        case "cancel":
          return `${i.op}Workflow ${i.to}`;
        case "update":
          return `updateWorkflow ${i.to} add(${i.n})`;
        case "start":
          return `startWorkflow ${i.to} (${i.running}) ${programText(i.prog)}`;
        case "sws":
          return `signalWithStart ${i.to} a ${programText(i.prog)}`;
      }
  }
}

/** The ID of the child that instruction `pc` of a run of `id` whose input has `epoch` starts. */
export const childId = (id: string, epoch: string, pc: number): string => `${id}-${epoch}-c${pc}`;
/** The ID of the workflow that the spawning step at `pc` of a run of `id` whose input has `epoch` starts. */
export const spawnId = (id: string, epoch: string, pc: number): string => `${id}-${epoch}-s${pc}`;
/** The parent of a child or spawned ID, or `undefined` for an ID clients start. */
export const parentOf = (id: string): string | undefined => /^(.*)-[^-]+-[cs]\d+$/.exec(id)?.[1];
/** The epoch the run continued as new from a run of `epoch` gets. */
export const nextEpoch = (epoch: string): string => `${epoch}n`;
/** The epoch of a run that instruction `pc` of a run of `id` with `epoch` starts by a message. */
export const messageEpoch = (id: string, epoch: string, pc: number): string => `${id}.${epoch}.m${pc}`;
/** The value of the signal that instruction `pc` of run `runId` of `id` with `epoch` sends (a reset run sends anew). */
export const messageValue = (id: string, epoch: string, runId: number, pc: number): string => `${id}.${epoch}.r${runId}.${pc}`;
/** A program as started: with the epoch that names what it starts. */
export const stamped = (prog: Program, epoch: string): Program => ({ ...prog, epoch });
/** The search attributes a client start with `tag` gives the run: the tag, and a list holding it (for `has`). */
export const startAttributes = (tag: Tag | undefined): Record<string, unknown> => (tag === undefined ? {} : { tag, tags: [tag] });
