// One engine process of the simulated cluster. Reads commands from stdin, one JSON object a line
// ({ n, op, ... }), and answers each on stdout ({ n, ok, value } or { n, ok: false, name, message });
// prints `ready` once open. Arguments: url schema owner leaseMs skewMs forwardTimeoutMs shards.
// The engine's clock runs `skewMs` ahead of (or behind) the machine's, as a badly synchronised host's
// would; leases are timed on the database clock and the process's monotonic clock, which no skew moves.
import "reflect-metadata";
import { createInterface } from "node:readline";
import { Batch, Config, Ctx, Engine, Query, Signal, Update, Workflow, type Clock } from "@fusee/runtime";
import {
  ACC_TYPE,
  BATCH_TYPE,
  PARENT_TYPE,
  TICK_TYPE,
  TOCK_TYPE,
  type TockRun,
  type TockSpec,
  type Family,
  RELAY_TYPE,
  type AccInput,
  type AccState,
  type Bump,
  type Bumped,
  type Inspection,
  type Relayed,
  type RelayOutcome,
} from "./wire.js";

const [url, schema, owner, leaseMs, skewMs, forwardTimeoutMs, shards] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];

/**
 * Collects `add` signals and `bump` updates until it is cancelled. One step and one timer make the
 * run do durable work of its own on whichever process holds its shard. Started with `every`, it
 * continues as new once its run has applied that many signals and updates, handing its state on.
 */
@Workflow(ACC_TYPE)
class Acc {
  private tags: string[] = [];
  private updates: string[] = [];
  private count = 0;
  private total = 0;
  /** Signals and updates this run applied. */
  private applied = 0;
  constructor(private readonly ctx: Ctx) {}

  async run(input?: AccInput): Promise<void> {
    // Before the first await: the messages a replaced run hands on are applied to the state it handed on.
    if (input?.state !== undefined) ({ tags: this.tags, updates: this.updates, count: this.count, total: this.total } = input.state);
    await this.ctx.step("init", () => Promise.resolve(owner));
    await this.ctx.sleep("30ms");
    const every = input?.every;
    if (every === undefined) {
      await this.ctx.waitFor("never");
      return;
    }
    await this.ctx.condition(() => this.applied >= every);
    await this.ctx.continueAsNew({ every, state: this.state() } satisfies AccInput);
  }

  @Signal() add(tag: string): void {
    this.tags.push(tag);
    this.applied++;
  }

  @Update() bump(arg: Bump): Bumped {
    this.count++;
    this.total += arg.by;
    this.updates.push(arg.tag);
    this.applied++;
    return { count: this.count, total: this.total };
  }

  @Query() state(): AccState {
    return { tags: [...this.tags], updates: [...this.updates], count: this.count, total: this.total };
  }
}

/**
 * Sends its plan's messages to runs of `ACC_TYPE` from workflow code, one after the other, and ends
 * with what each call answered: the calls whose sends the cluster must apply exactly once.
 */
@Workflow(RELAY_TYPE)
class Relay {
  constructor(private readonly ctx: Ctx) {}

  async run(plan: Relayed[]): Promise<RelayOutcome[]> {
    const out: RelayOutcome[] = [];
    for (const m of plan) {
      try {
        out.push({ ok: true, value: (await this.send(m)) ?? null });
      } catch (e) {
        // The target's refusal (no such run, a run that ended) is journaled as the send's answer.
        out.push({ ok: false, value: null, error: `${(e as Error).name}: ${(e as Error).message}` });
      }
    }
    return out;
  }

  private send(m: Relayed): Promise<unknown> {
    switch (m.op) {
      case "signalWorkflow":
        return this.ctx.signalWorkflow(m.to, "add", m.tag);
      case "updateWorkflow":
        return this.ctx.updateWorkflow<Bumped>(m.to, "bump", { by: m.by, tag: m.tag } satisfies Bump);
      case "cancelWorkflow":
        return this.ctx.cancelWorkflow(m.to);
      case "startWorkflow":
        return this.ctx.startWorkflow(ACC_TYPE, m.to, accInput(m.every));
      case "signalWithStart":
        return this.ctx.signalWithStart(ACC_TYPE, m.to, accInput(m.every), "add", m.tag);
    }
  }
}

const ONCE = { idPolicy: { running: "fail", finished: "refuse" } } as const;

/**
 * Starts its children on their own shards, waits to be signalled `finish`, then ends or continues as
 * new: either way each child gets its close policy.
 */
@Workflow(PARENT_TYPE)
class Parent {
  constructor(private readonly ctx: Ctx) {}

  async run(family: Family): Promise<string> {
    if (family.then === "done") return "done";
    await this.ctx.step("init", () => Promise.resolve(owner));
    for (const c of family.children) await this.ctx.startChild(ACC_TYPE, c.id, undefined, { close: c.close });
    await this.ctx.step("spawned", () => Promise.resolve(owner));
    await this.ctx.waitFor("finish");
    if (family.then === "continue") return this.ctx.continueAsNew({ children: [], then: "done" } satisfies Family);
    return "done";
  }
}

/** What a schedule's instants start: a run that ends at once. */
@Workflow(TICK_TYPE)
class Tick {
  run(): Promise<string> {
    return Promise.resolve(owner);
  }
}

/** What the schedule with operations starts: a run that lasts `holdMs` (a durable timer). */
@Workflow(TOCK_TYPE)
class Tock {
  constructor(private readonly ctx: Ctx) {}

  async run(holdMs: number): Promise<string> {
    await this.ctx.sleep(`${holdMs}ms`);
    return owner;
  }
}

/** What a batch starts: a run that ends with the batch's events, so the checks read them. */
@Workflow(BATCH_TYPE)
class Batched {
  run(events: string[]): Promise<string[]> {
    return Promise.resolve(events);
  }
}

function accInput(every: number | undefined): AccInput | undefined {
  return every === undefined ? undefined : { every };
}

/** The schedule with operations: catch-up "one", so its overlap policy decides every instant but backfilled ones. */
function tockSpec(spec: TockSpec): Parameters<Engine["schedule"]>[1] {
  return { workflow: Tock, every: spec.everyMs, overlap: spec.overlap, catchUp: "one", input: spec.holdMs };
}

const skew = Number(skewMs);
const skewedClock: Clock = {
  now: () => Date.now() + skew,
  schedule(ms, fn) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  },
};

const engine = await Engine.open(
  Config.postgres(url, { schema, owner, leaseMs: Number(leaseMs), cluster: true, forwardTimeoutMs: Number(forwardTimeoutMs) })
    .shards(Number(shards))
    .clock(skewedClock),
  { workflows: [Acc, Relay, Parent, Tick, Tock, Batched] },
);

type Command =
  | { n: number; op: "start"; id: string; relay?: Relayed[]; every?: number; family?: Family }
  | { n: number; op: "finish"; id: string }
  | { n: number; op: "schedule"; name: string; everyMs: number }
  | { n: number; op: "schedulePause"; name: string }
  | { n: number; op: "tockSchedule"; name: string; spec: TockSpec }
  | { n: number; op: "tockUpdate"; name: string; spec: TockSpec }
  | { n: number; op: "scheduleTrigger"; name: string }
  | { n: number; op: "scheduleResume"; name: string }
  | { n: number; op: "scheduleBackfill"; name: string; from: number; to: number }
  | { n: number; op: "scheduleDelete"; name: string }
  | { n: number; op: "tocks" }
  | { n: number; op: "batch"; key: string; tag: string; eventId?: string; size: number; timeoutMs: number }
  | { n: number; op: "batchRuns"; key: string }
  | { n: number; op: "terminate"; id: string }
  | { n: number; op: "signalWithStart"; id: string; tag: string; every?: number }
  | { n: number; op: "updateWithStart"; id: string; uid: string; by: number; every?: number }
  | { n: number; op: "scheduleDescribe"; name: string }
  | { n: number; op: "runId"; id: string }
  | { n: number; op: "signal"; id: string; tag: string }
  | { n: number; op: "update"; id: string; by: number; uid: string }
  | { n: number; op: "result"; id: string }
  | { n: number; op: "reset"; id: string; step?: string }
  | { n: number; op: "cancel"; id: string }
  | { n: number; op: "holds"; id: string }
  | { n: number; op: "inspect"; id: string };

async function perform(c: Command): Promise<unknown> {
  switch (c.op) {
    case "start":
      // Asked again until answered: a repeat must not start a second run of an ID whose first (a relay's) has ended.
      if (c.relay !== undefined) await engine.start(Relay, c.id, c.relay, ONCE);
      else if (c.family !== undefined) await engine.start(Parent, c.id, c.family, ONCE);
      else await engine.start(Acc, c.id, accInput(c.every), ONCE);
      return null;
    case "signal":
      await engine.run(c.id).signal("add", c.tag);
      return null;
    case "update":
      return engine.run(c.id).update("bump", { by: c.by, tag: c.uid } satisfies Bump, { id: c.uid });
    case "schedule":
      // Every instant starts, late ones too (caught up after a takeover), whatever still runs.
      await engine.schedule(c.name, { workflow: Tick, every: c.everyMs, overlap: "allow-all", catchUp: "all" });
      return null;
    case "schedulePause":
      await engine.getSchedule(c.name).pause();
      return null;
    case "tockSchedule":
      await engine.schedule(c.name, tockSpec(c.spec));
      return null;
    case "tockUpdate":
      await engine.getSchedule(c.name).update(tockSpec(c.spec));
      return null;
    case "scheduleResume":
      await engine.getSchedule(c.name).resume();
      return null;
    case "scheduleTrigger":
      await engine.getSchedule(c.name).trigger();
      return null;
    case "scheduleBackfill":
      await engine.getSchedule(c.name).backfill(c.from, c.to);
      return null;
    case "scheduleDelete":
      await engine.getSchedule(c.name).delete();
      return null;
    case "tocks":
      return (await engine.listWhere({ type: TOCK_TYPE }, 10_000)).map((r): TockRun => ({
        id: r.id,
        runId: r.runId,
        status: r.status,
        startedAt: r.startedAt,
        endedAt: r.endedAt,
      }));
    case "batch": {
      const options = c.eventId === undefined ? {} : { eventId: c.eventId };
      return (await engine.batch(Batched, c.key, c.tag, Batch.of(c.size, c.timeoutMs), options)).id;
    }
    case "batchRuns":
      return (await engine.listWhere({ type: BATCH_TYPE }, 10_000)).map((r) => r.id).filter((id) => id.startsWith(`${c.key}#`));
    case "scheduleDescribe":
      return engine.getSchedule(c.name).describe();
    case "runId":
      return (await engine.describe(c.id))?.runId ?? null;
    case "finish":
      await engine.run(c.id).signal("finish", null);
      return null;
    case "reset":
      await engine.run(c.id).reset(c.step ?? "init");
      return null;
    case "result":
      return engine.run(c.id).result();
    case "terminate":
      await engine.run(c.id).terminate("the cluster simulation terminates it");
      return null;
    case "signalWithStart":
      await engine.signalWithStart(Acc, c.id, accInput(c.every), "add", c.tag, ONCE);
      return null;
    case "updateWithStart": {
      // A running run takes the update; a finished one is not started again.
      const policy = { idPolicy: { running: "use-existing", finished: "refuse" }, updateId: c.uid } as const;
      return (await engine.updateWithStart(Acc, c.id, accInput(c.every), "bump", { by: c.by, tag: c.uid } satisfies Bump, policy)).result;
    }
    case "cancel":
      await engine.run(c.id).cancel("the cluster simulation cancels it");
      return null;
    case "holds":
      return engine.holdsRun(c.id);
    case "inspect":
      return inspect(c.id);
  }
}

/** What the run's journal holds, as the checks compare it with the model. */
async function inspect(id: string): Promise<Inspection | null> {
  const detail = await engine.describe(id);
  if (detail === undefined) return null;
  const out: Inspection = { status: detail.status, runs: 1, tags: [], signalRequests: [], updates: [], results: [], cancels: 0, steps: [] };
  for (const r of detail.journal) {
    if (r.kind === "start") {
      if (r.from !== undefined) out.runs++;
      // A cancel the replaced run was told of but its code did not see is applied by this run.
      out.cancels += r.carried?.messages?.filter((m) => m.kind === "cancel").length ?? 0;
      // An update that started the run (`updateWithStart`) rides in its start record.
      if (r.update?.name === "bump") out.updates.push({ id: r.update.id, tag: (r.update.arg as Bump).tag });
      if (r.signal?.name === "add") {
        out.tags.push(r.signal.value as string);
        out.signalRequests.push(r.request ?? null);
      }
    } else if (r.kind === "signal" && r.name === "add") {
      out.tags.push(r.value as string);
      out.signalRequests.push(r.request ?? null);
    } else if (r.kind === "update") out.updates.push({ id: r.id, tag: (r.arg as Bump).tag });
    else if (r.kind === "update-result") out.results.push({ id: r.id, ok: r.ok, value: r.ok ? (r.value as Bumped) : null });
    else if (r.kind === "cancel") out.cancels++;
    else if (r.kind === "step") out.steps.push({ name: r.name, ok: r.ok });
  }
  // What the workflow code holds, replayed from the journal by whichever process owns the run.
  // A run that ended answers from its journal too, replayed; a run that could not go on does not.
  if (detail.type === ACC_TYPE && detail.status !== "stopped") out.state = await engine.run(id).query<AccState>("state");
  return out;
}

createInterface({ input: process.stdin }).on("line", (text) => {
  const c = JSON.parse(text) as Command;
  perform(c).then(
    (value) => process.stdout.write(`${JSON.stringify({ n: c.n, ok: true, value: value ?? null })}\n`),
    (e: Error & { reason?: string }) =>
      process.stdout.write(`${JSON.stringify({ n: c.n, ok: false, name: e.name, message: e.message, reason: e.reason })}\n`),
  );
});
process.stdout.write("ready\n");
// Keeps the process alive between commands: the parent ends it (SIGKILL or closing its stdin).
process.stdin.on("end", () => {
  engine.shutdown().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`shutdown failed: ${String(e)}\n`);
      process.exit(1);
    },
  );
});
