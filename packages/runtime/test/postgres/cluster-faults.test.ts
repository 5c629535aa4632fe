import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shardOf, SYSTEM_STREAM_PREFIX } from "../../src/core/ids.js";
import { ClusterWorker, holders, rerunsAfterAck } from "./support/cluster.js";
import { PG_URL, sql, useSchemas } from "./support/database.js";
import { maxConcurrentBodies, terminateSessionsOf, uniqueOwner } from "./support/faults.js";
import { eventually, sleep } from "../support/wait.js";

const SHARDS = 8;
const LEASE_MS = 1_500;

describe("A PostgreSQL cluster under faults (real processes)", function () {
  this.timeout(60_000);
  const schema = useSchemas();
  let workers: ClusterWorker[] = [];
  let stepLog = "";
  beforeEach(() => {
    stepLog = join(tmpdir(), `fusee-faults-${randomBytes(4).toString("hex")}.log`);
  });
  afterEach(async () => {
    for (const w of workers) {
      if (w.process.signalCode === null && w.process.exitCode === null) w.process.kill("SIGCONT");
      await w.kill();
    }
    workers = [];
    if (existsSync(stepLog)) rmSync(stepLog);
  });
  const steps = (): string[] => (existsSync(stepLog) ? readFileSync(stepLog, "utf8").split("\n").filter(Boolean) : []);

  /** Two engine processes with owner names of their own, each holding half of the shards. */
  const pair = async (env: Record<string, string> = {}): Promise<[ClusterWorker, ClusterWorker, string]> => {
    const name = schema();
    const start = async (prefix: string): Promise<ClusterWorker> => {
      const w = new ClusterWorker(uniqueOwner(prefix), { url: PG_URL, schema: name, leaseMs: LEASE_MS, stepLog, env });
      workers.push(w);
      await w.ready;
      return w;
    };
    const x = await start("x");
    const y = await start("y");
    await eventually(
      "the shards to split evenly",
      async () => {
        const h = await holders(name);
        return h.filter((o) => o === x.owner).length === SHARDS / 2 && h.filter((o) => o === y.owner).length === SHARDS / 2;
      },
      15_000,
    );
    return [x, y, name];
  };

  /** Waits until every run completed, asking `via` (retrying a call that fails while shards move). */
  const allCompleted = (via: ClusterWorker, ids: readonly string[], ms: number): Promise<void> =>
    eventually(
      `all ${ids.length} runs to complete`,
      async () => {
        const statuses = await Promise.all(ids.map((id) => via.send<{ status: string } | null>({ op: "status", id }).catch(() => null)));
        return statuses.every((s) => s?.status === "ok");
      },
      ms,
    );

  it("carries on when its connections are terminated mid-insert: the runs finish without a restart and no acknowledged step runs again", async () => {
    const [x, y, name] = await pair();
    const ids = Array.from({ length: 40 }, (_, i) => `drop-${i}`);
    await Promise.all(ids.map((id, i) => (i % 2 === 0 ? x : y).send({ op: "start", id, input: { n: i, wait: false, stepMs: 30 } })));
    await eventually("steps to be under way in both processes", () => steps().filter((l) => l.startsWith("ack ")).length >= 20);

    expect(await terminateSessionsOf(x.owner), "sessions of the process cut off").to.be.greaterThan(0);

    await allCompleted(y, ids, 30_000);
    const results = await Promise.all(ids.map((id) => x.send<string>({ op: "result", id })));
    expect(results).to.deep.equal(ids.map((_, i) => `${i + 10}`));
    expect(rerunsAfterAck(steps()), "acknowledged steps executed again").to.deep.equal([]);
    expect(x.process.exitCode, "the process whose connections died is still running").to.equal(null);
    await eventually("the process to hold shards again", async () => (await holders(name)).includes(x.owner), 15_000);
    expect(await x.send<boolean>({ op: "holds", id: "after" }).then(() => true)).to.equal(true);
  });

  it("starts no step of a shard it lost while paused past its lease, and answers a forward to it with a timeout", async () => {
    const [x, y, name] = await pair({ FUSEE_TEST_FORWARD_TIMEOUT_MS: "500" });
    const owners = await holders(name);
    const ids = Array.from({ length: 24 }, (_, i) => `pause-${i}`);
    const ofX = ids.filter((id) => owners[shardOf(id, SHARDS)] === x.owner);
    expect(ofX.length).to.be.greaterThan(0);
    await Promise.all(ids.map((id, i) => y.send({ op: "start", id, input: { n: i, wait: false, stepMs: 150 } })));
    await eventually("steps to be under way in the process to pause", () =>
      steps().some((l) => l.startsWith("ack ") && l.endsWith(` ${x.owner}`)),
    );

    x.process.kill("SIGSTOP");
    const forwarded = await y.send({ op: "signal", id: ofX[0], by: "test" }).catch((e: Error) => e);
    expect(forwarded, "a call forwarded to the paused owner").to.be.instanceOf(Error);
    expect((forwarded as Error).name).to.equal("ForwardTimeoutError");
    await sleep(LEASE_MS * 2.5);
    x.process.kill("SIGCONT");

    await allCompleted(y, ids, 30_000);
    expect(rerunsAfterAck(steps()), "acknowledged steps executed again").to.deep.equal([]);
    await eventually("the paused process to warn that it lost its leases", () => x.errors.includes("FuseeLeaseWarning"), 5_000);
    expect(x.process.exitCode).to.equal(null);
    await eventually("the paused process to hold shards again", async () => (await holders(name)).includes(x.owner), 15_000);
  });

  it("keeps a shared limit within its bound when a holder of its permits is paused past their expiry", async () => {
    const [x, y] = await pair();
    const ids = Array.from({ length: 10 }, (_, i) => `limited-${i}`);
    await Promise.all(
      ids.map((id, i) =>
        (i % 2 === 0 ? x : y).send({ op: "startType", type: "cluster-ticking", id, input: { limit: "three", ticks: 25, everyMs: 30 } }),
      ),
    );
    await eventually("the process to pause to hold a permit", () =>
      steps().some((l) => l.startsWith("tick ") && l.includes(` ${x.owner} `)),
    );

    x.process.kill("SIGSTOP");
    await sleep(LEASE_MS * 2.5);
    x.process.kill("SIGCONT");

    await eventually(
      "every limited step to be acknowledged",
      () =>
        new Set(
          steps()
            .filter((l) => l.startsWith("ack "))
            .map((l) => l.split(" ")[1]),
        ).size === ids.length,
      30_000,
    );
    expect(maxConcurrentBodies(steps()), "step bodies under the limit at once").to.be.at.most(3);
    await allCompleted(y, ids, 10_000);
  });

  it("starts no run and writes no record of a schedule whose shard it lost while paused past its lease: the schedule paused meanwhile stays paused", async () => {
    const [x, y, name] = await pair();
    const owners = await holders(name);
    const schedule = Array.from({ length: 64 }, (_, i) => `ticker-${i}`).find(
      (s) => owners[shardOf(`${SYSTEM_STREAM_PREFIX}schedule/${s}`, SHARDS)] === x.owner,
    )!;
    const shard = shardOf(`${SYSTEM_STREAM_PREFIX}schedule/${schedule}`, SHARDS);
    const spec = { workflow: "cluster-echo", every: "100ms", overlap: "allow-all", catchUp: "none" };
    await x.send({ op: "schedule", name: schedule, spec });
    /** The instants of the schedule's runs, asked of `y` (again while a shard it asks moves). */
    const ticks = async (): Promise<number[]> => {
      let ids: string[] | undefined;
      await eventually("the runs to be listed", async () => {
        ids = await y.send<string[]>({ op: "list", filter: { type: "cluster-echo" }, limit: 1_000 }).catch(() => undefined);
        return ids !== undefined;
      });
      return ids!
        .map((l) => l.split(" ")[0]!)
        .flatMap((id) => (id.startsWith(`${schedule}@`) ? [Number(id.slice(schedule.length + 1))] : []));
    };
    await eventually("the schedule to start runs", async () => (await ticks()).length >= 2);

    x.process.kill("SIGSTOP");
    await eventually("the other process to hold every shard", async () => (await holders(name)).every((o) => o === y.owner), 10_000);
    await eventually("the schedule to be paused through its new holder", () =>
      y.send({ op: "schedule", name: schedule, spec, then: "pause" }).then(
        () => true,
        () => false,
      ),
    );
    const paused = Date.now();
    // A start under way when the pause came may still record itself: the stream is measured once it
    // stayed the same over ten of the schedule's periods.
    let recorded = await scheduleRecords(name, schedule);
    let since = Date.now();
    await eventually("the schedule's stream to be still", async () => {
      const now = await scheduleRecords(name, schedule);
      if (now !== recorded) [recorded, since] = [now, Date.now()];
      return Date.now() - since >= 1_000;
    });
    x.process.kill("SIGCONT");

    const lost = async (): Promise<boolean> =>
      (await x.send<{ kind: string; shard?: number }[]>({ op: "events" })).some((e) => e.kind === "lease-lost" && e.shard === shard);
    await eventually("the stopped process to learn it lost the schedule's shard", lost, 10_000);
    await eventually("the stopped process to hold shards again", async () => (await holders(name)).includes(x.owner), 15_000);

    expect(await scheduleRecords(name, schedule), "records of the schedule's stream").to.equal(recorded);
    const late = (await ticks()).filter((t) => t > paused);
    expect(late, "instants after the pause that have runs").to.deep.equal([]);
    const holder = (await holders(name))[shard] === x.owner ? x : y;
    const described = await holder.send<{ started: number; paused: boolean }>({ op: "schedule", name: schedule, spec, then: "describe" });
    expect(described.paused).to.equal(true);
    expect(described.started, "runs the schedule counts").to.equal((await ticks()).length);
  });

  it("starts no debounced run of a window whose shard it lost while paused past its lease: the shard's next holder starts it once, with the latest input", async () => {
    const [x, y, name] = await pair();
    const owners = await holders(name);
    const shardOfKey = (key: string): number => shardOf(`${SYSTEM_STREAM_PREFIX}debounce/${key}`, SHARDS);
    const keysOfX = (prefix: string): string[] =>
      Array.from({ length: 200 }, (_, i) => `${prefix}-${i}`).filter((k) => owners[shardOfKey(k)] === x.owner);
    const delay = 6_000;
    const debounce = (via: ClusterWorker, key: string, rev: number): Promise<string> =>
      via.send<string>({ op: "debounce", key, input: { rev }, delay: `${delay}ms`, eventId: `e-${rev}` });
    /** When the window of run `id` ("<key>@<opening time>") falls due, with no later start. */
    const dueOf = (id: string): number => Number(id.slice(id.lastIndexOf("@") + 1)) + delay;

    // Windows of one delay share one of Node's timer lists, whose overdue timers a process that wakes
    // runs one after the other once the first is due, before the timers that check its leases. The
    // process is paused as windows it opened first fall due, a few milliseconds apart: windows it
    // opened later, which the next holder keeps open with a later start, run with them when it wakes.
    const early: number[] = [];
    for (const key of keysOfX("pad").slice(0, 30)) {
      early.push(dueOf(await debounce(x, key, 1)));
      await sleep(10);
    }
    await sleep(early[0]! - delay + 4_000 - Date.now());
    const keys = [...new Map(keysOfX("doc").map((k) => [shardOfKey(k), k])).values()];
    const ids = await Promise.all(keys.map((key) => debounce(x, key, 1)));
    await sleep(early[early.length - 8]! - Date.now());
    x.process.kill("SIGSTOP");

    await eventually("the other process to hold every shard", async () => (await holders(name)).every((o) => o === y.owner), 10_000);
    for (const [i, key] of keys.entries()) {
      let later: string | undefined;
      await eventually("the shard's new holder to take a later start", () =>
        debounce(y, key, 2).then(
          (id) => ((later = id), true),
          () => false,
        ),
      );
      expect(later, `one window of ${key} for both starts`).to.equal(ids[i]);
    }
    await sleep(Math.max(...ids.map(dueOf)) + 200 - Date.now());
    const woken = Date.now();
    x.process.kill("SIGCONT");

    const lost = async (): Promise<boolean> =>
      (await x.send<{ kind: string; at: number }[]>({ op: "events" })).filter((e) => e.kind === "lease-lost" && e.at >= woken).length >=
      SHARDS / 2;
    await eventually("the stopped process to learn it lost its shards", lost, 10_000);
    await allCompleted(y, ids, 15_000);
    const inputs = await Promise.all(ids.map((id) => y.send<{ rev: number }>({ op: "result", id })));
    const expected = Object.fromEntries(keys.map((key) => [key, 2]));
    expect(Object.fromEntries(keys.map((key, i) => [key, inputs[i]!.rev])), "the input each window's run had").to.deep.equal(expected);
    const runs = await y.send<string[]>({ op: "list", filter: { type: "cluster-echo" }, limit: 1_000 });
    for (const key of keys)
      expect(
        runs.filter((r) => r.startsWith(`${key}@`)),
        `runs of ${key}`,
      ).to.have.length(1);
  });
});

/**
 * The entries of a schedule's stream (every generation of it) in the schema's batch rows, as
 * "<entries>/<live entries>": a new record or a dropped generation changes it.
 */
async function scheduleRecords(schema: string, schedule: string): Promise<string> {
  const [row] = await sql<{ total: number; live: number }>(
    `SELECT count(*)::int AS total, (count(*) FILTER (WHERE x.position <> ALL (b.dead)))::int AS live
       FROM "${schema}".batches AS b, unnest(b.streams) WITH ORDINALITY AS x(stream, position)
      WHERE left(x.stream, length($1)) = $1`,
    [`${SYSTEM_STREAM_PREFIX}schedule/${schedule}/`],
  );
  return `${row!.total}/${row!.live}`;
}
