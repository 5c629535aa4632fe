// One engine process of the simulated cluster. Reads commands from stdin, one JSON object a line
// ({ n, op, ... }), and answers each on stdout ({ n, ok, value } or { n, ok: false, name, message });
// prints `ready` once open. Arguments: url schema owner leaseMs skewMs forwardTimeoutMs shards.
// The engine's clock runs `skewMs` ahead of (or behind) the machine's, as a badly synchronised host's
// would; leases are timed on the database clock and the process's monotonic clock, which no skew moves.
import "reflect-metadata";
import { createInterface } from "node:readline";
import { Config, Ctx, Engine, Query, Signal, Update, Workflow, type Clock } from "@fusee/runtime";
import { ACC_TYPE, FINISHED, type Bumped, type Inspection } from "./wire.js";

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
 * run do durable work of its own on whichever process holds its shard.
 */
@Workflow(ACC_TYPE)
class Acc {
  private readonly tags: string[] = [];
  private count = 0;
  private total = 0;
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<void> {
    await this.ctx.step("init", () => Promise.resolve(owner));
    await this.ctx.sleep("30ms");
    await this.ctx.waitFor("never");
  }

  @Signal() add(tag: string): void {
    this.tags.push(tag);
  }

  @Update() bump(n: number): Bumped {
    this.count++;
    this.total += n;
    return { count: this.count, total: this.total };
  }

  @Query() state(): { tags: string[]; count: number; total: number } {
    return { tags: this.tags, count: this.count, total: this.total };
  }
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
  { workflows: [Acc] },
);

type Command =
  | { n: number; op: "start"; id: string }
  | { n: number; op: "signal"; id: string; tag: string }
  | { n: number; op: "update"; id: string; by: number; uid: string }
  | { n: number; op: "cancel"; id: string }
  | { n: number; op: "holds"; id: string }
  | { n: number; op: "inspect"; id: string };

async function perform(c: Command): Promise<unknown> {
  switch (c.op) {
    case "start":
      await engine.start(Acc, c.id, undefined);
      return null;
    case "signal":
      await engine.run(c.id).signal("add", c.tag);
      return null;
    case "update":
      return engine.run(c.id).update("bump", c.by, { id: c.uid });
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
  const out: Inspection = { status: detail.status, runs: 1, tags: [], signalRequests: [], updates: [], results: [], cancels: 0 };
  for (const r of detail.journal) {
    if (r.kind === "start" && r.from !== undefined) out.runs++;
    else if (r.kind === "signal" && r.name === "add") {
      out.tags.push(r.value as string);
      out.signalRequests.push(r.request ?? null);
    } else if (r.kind === "update") out.updates.push(r.id);
    else if (r.kind === "update-result") out.results.push({ id: r.id, ok: r.ok, value: r.ok ? (r.value as Bumped) : null });
    else if (r.kind === "cancel") out.cancels++;
  }
  // What the workflow code holds, replayed from the journal by whichever process owns the run.
  if (!FINISHED.has(detail.status)) out.state = await engine.run(id).query<{ tags: string[]; count: number; total: number }>("state");
  return out;
}

createInterface({ input: process.stdin }).on("line", (text) => {
  const c = JSON.parse(text) as Command;
  perform(c).then(
    (value) => process.stdout.write(`${JSON.stringify({ n: c.n, ok: true, value: value ?? null })}\n`),
    (e: Error) => process.stdout.write(`${JSON.stringify({ n: c.n, ok: false, name: e.name, message: e.message })}\n`),
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
