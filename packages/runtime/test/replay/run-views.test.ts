import { expect } from "chai";
import fc from "fast-check";
import { rmSync } from "node:fs";
import type { ListFilter, RunStatus } from "../../src/client/types.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { DataDirReader } from "../../src/replay/data-dir-reader.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { tempDir } from "../runtime/harness.js";

type Attributes = Readonly<Record<string, unknown>>;

/** What the test asks of a run, through its one signal. */
type Command =
  | { readonly op: "set"; readonly attributes: Attributes }
  | { readonly op: "remove"; readonly names: readonly string[] }
  | { readonly op: "step" }
  /** Waits for an outside answer to a token (`engine.complete`), and keeps the answer as attribute `c`. */
  | { readonly op: "ask" }
  | { readonly op: "complete" }
  | { readonly op: "fail" }
  | { readonly op: "continue"; readonly attributes?: Attributes };

/** The token each workflow ID last handed out for an answer. */
const TOKENS = new Map<string, string>();

/** Workflow IDs whose code is deployed changed (its first step renamed), so their replay stops them. */
const CHANGED = new Set<string>();

@Workflow("views-agent")
class Agent {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.step(CHANGED.has(this.ctx.workflowId) ? "begin-v2" : "begin", async () => 0);
    for (let n = 0; ; n++) {
      const command = await this.ctx.waitFor<Command>("command");
      switch (command?.op) {
        case "set":
          this.ctx.setAttributes({ ...command.attributes });
          break;
        case "remove":
          this.ctx.removeAttributes(...command.names);
          break;
        case "step":
          await this.ctx.step(`work-${n}`, async () => n);
          break;
        case "ask": {
          const id = this.ctx.workflowId;
          const answer = await this.ctx.awaitCompletion<unknown>(`ask-${n}`, ({ token }) => void TOKENS.set(id, token));
          this.ctx.setAttributes({ c: answer });
          break;
        }
        case "complete":
          return "done";
        case "fail":
          throw new Error("asked to fail");
        case "continue":
          return this.ctx.continueAsNew(
            ...(command.attributes === undefined ? [] : [undefined, { attributes: { ...command.attributes } }]),
          );
      }
    }
  }
}

type Action =
  | { readonly op: "start"; readonly id: string; readonly attributes?: Attributes }
  | { readonly op: "command"; readonly id: string; readonly command: Command }
  | { readonly op: "cancel" | "terminate" | "reset"; readonly id: string }
  /** The outside party answers the ID's last token with a value, or with an error. */
  | { readonly op: "answer"; readonly id: string; readonly value: unknown; readonly fails: boolean }
  /** A deploy that renames the first step of the ID's runs (`change`) or takes that back (`mend`). */
  | { readonly op: "change"; readonly id: string }
  | { readonly op: "mend"; readonly id: string }
  | { readonly op: "restart" };

const IDS = ["w-1", "w-2", "w-3"];
// `c` is also where a run keeps the answer to its token.
const NAMES = ["a", "b", "c"];

const TAGS = ["x", "y"];
/** Attribute values of each kind a filter compares differently: numbers, strings, instants, lists of tags. */
const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 2 }) },
  fc.constantFrom(...TAGS),
  fc.integer({ min: 0, max: 2 }).map((s) => new Date(s * 1_000)),
  fc.subarray(TAGS),
);
const attributes: fc.Arbitrary<Attributes> = fc.dictionary(fc.constantFrom(...NAMES), value, { maxKeys: 3 });
const id = fc.constantFrom(...IDS);
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: attributes.map((a) => ({ op: "set", attributes: a }) as const) },
  { weight: 3, arbitrary: fc.subarray(NAMES, { minLength: 1 }).map((names) => ({ op: "remove", names }) as const) },
  fc.constant({ op: "step" } as const),
  { weight: 2, arbitrary: fc.constant({ op: "ask" } as const) },
  fc.constant({ op: "complete" } as const),
  fc.constant({ op: "fail" } as const),
  fc
    .option(attributes, { nil: undefined })
    .map((a) => (a === undefined ? { op: "continue" as const } : { op: "continue" as const, attributes: a })),
);
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("start" as const), id, attributes: fc.option(attributes, { nil: undefined }) }) },
  { weight: 10, arbitrary: fc.record({ op: fc.constant("command" as const), id, command }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom("cancel" as const, "terminate" as const, "reset" as const), id }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom("change" as const, "mend" as const), id }) },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant("answer" as const), id, value, fails: fc.integer({ min: 0, max: 3 }).map((n) => n === 0) }),
  },
  { weight: 1, arbitrary: fc.constant({ op: "restart" } as const) },
);

/** A run as every view must show it: a run not finished shows `running`, as a reader sees it from outside. */
interface Seen {
  readonly runId: number;
  readonly type: string;
  readonly status: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly startedAt: number;
  readonly endedAt: number | undefined;
  readonly error: string | undefined;
}

const FINISHED_OR_STOPPED = new Set(["ok", "failed", "cancelled", "terminated", "stopped"]);

function seen(run: RunStatus): Seen {
  return {
    runId: run.runId,
    type: run.type,
    status: FINISHED_OR_STOPPED.has(run.status) ? run.status : "running",
    attributes: { ...run.attributes },
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    error: run.error,
  };
}

/** The filters each view is asked: every status a reader tells apart, and every attribute value the history can set. */
function filters(): ListFilter[] {
  const out: ListFilter[] = [...FINISHED_OR_STOPPED].map((status) => ({ status }) as ListFilter);
  for (const name of NAMES) {
    for (let n = 0; n <= 2; n++) out.push({ [name]: n });
    out.push({ [name]: "x" }, { [name]: { has: "x" } }, { [name]: { gte: new Date(1_000) } }, { [name]: { in: [0, "y"] } });
    out.push({ [name]: { ne: 1 } }, { [name]: new Date(2_000) });
  }
  out.push({ a: { gte: 1 }, type: "views-agent" });
  return out;
}

interface View {
  readonly runs: Readonly<Record<string, Seen>>;
  /** The IDs each of {@link filters} lists, sorted. */
  readonly listed: readonly (readonly string[])[];
}

async function engineView(engine: Engine): Promise<View> {
  const runs: Record<string, Seen> = {};
  const listed = (await engine.list(1_000)).map((r) => r.id).sort();
  for (const runId of listed) {
    const detail = await engine.describe(runId);
    if (detail !== undefined) runs[runId] = seen(detail);
  }
  expect(Object.keys(runs).sort(), "describe knows every run list lists").to.deep.equal(listed);
  const byFilter: string[][] = [];
  for (const filter of filters()) byFilter.push((await engine.listWhere(filter, 1_000)).map((r) => r.id).sort());
  return { runs, listed: byFilter };
}

async function readerView(dir: string): Promise<View> {
  const reader = await DataDirReader.open(dir);
  try {
    const runs: Record<string, Seen> = {};
    for (const run of reader.list({}, 1_000)) runs[run.id] = seen(run);
    for (const runId of Object.keys(runs)) expect(seen(reader.status(runId)!)).to.deep.equal(runs[runId]);
    return {
      runs,
      listed: filters().map((f) =>
        reader
          .list(f, 1_000)
          .map((r) => r.id)
          .sort(),
      ),
    };
  } finally {
    await reader.close();
  }
}

function open(dir: string): Promise<Engine> {
  return Engine.open(Config.local(dir).shards(2), { workflows: [Agent] });
}

async function perform(engine: Engine, action: Exclude<Action, { op: "restart" | "change" | "mend" }>): Promise<void> {
  const run = engine.run(action.id);
  switch (action.op) {
    case "start":
      await engine.start(Agent, action.id, undefined, action.attributes === undefined ? {} : { attributes: { ...action.attributes } });
      return;
    case "command":
      await run.signal("command", action.command);
      return;
    case "cancel":
      await run.cancel();
      return;
    case "terminate":
      await run.terminate();
      return;
    case "reset":
      await run.reset("begin");
      return;
    case "answer": {
      const token = TOKENS.get(action.id);
      if (token === undefined) return;
      if (action.fails) await engine.fail(token, new Error("refused"));
      else await engine.complete(token, action.value);
      return;
    }
  }
}

describe("the views of a data directory's runs", function () {
  this.timeout(300_000);
  afterEach(() => {
    CHANGED.clear();
    TOKENS.clear();
  });

  it("agree on runs, statuses, attributes and what listWhere finds: the engine's, the engine's after reopening, and readers' beside the engine and after it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 24 }), async (history) => {
        CHANGED.clear();
        TOKENS.clear();
        const dir = tempDir("views");
        let engine = await open(dir);
        try {
          for (const step of history) {
            if (step.op === "restart" || step.op === "change" || step.op === "mend") {
              // A deploy: changed code takes effect when the engine opens again.
              await engine.shutdown();
              if (step.op === "change") CHANGED.add(step.id);
              if (step.op === "mend") CHANGED.delete(step.id);
              engine = await open(dir);
            } else {
              // A call the run's state refuses (a start of a running ID, a signal to a finished run) changes nothing.
              await perform(engine, step).catch(() => undefined);
            }
            await engine.idle();
          }
          const live = await engineView(engine);
          // A reader beside the running engine, then one on the closed directory.
          const beside = await readerView(dir);
          await engine.shutdown();
          const read = await readerView(dir);
          engine = await open(dir);
          await engine.idle();
          const reopened = await engineView(engine);
          expect(beside, "the view of a reader beside the engine against the engine's").to.deep.equal(live);
          expect(read, "a reader's view against the engine's").to.deep.equal(live);
          expect(reopened, "the view after reopening against the one before").to.deep.equal(live);
        } finally {
          await engine.shutdown();
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 40 },
    );
  });
});
