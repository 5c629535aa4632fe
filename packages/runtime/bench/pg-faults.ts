/*
 * The PostgreSQL cluster under faults, measured: two engine processes (the cluster test's worker)
 * on a fresh schema with leases of 1.5 s, and per round one fault of the process `x`:
 *
 * - kill: SIGKILL; the figure is the failover, from the kill to each of x's runs starting a step
 *   on the survivor (p50/p99 over runs and rounds);
 * - drop: every database session of x terminated (`pg_terminate_backend`, by its application name);
 * - pause: SIGSTOP for 2.5 leases, then SIGCONT;
 * - permits: the same pause while x holds permits of a limit of 3 shared by both processes.
 *
 * For each: the runs that finished with no process restarted, the step effects that ran again
 * after the step was acknowledged (the target is 0), and for the limit the most step bodies that
 * ran at once (the target is its bound).
 * `npm run bench -- faults [--rounds N] [--faults kill,drop,pause,permits] [--json]`.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shardOf } from "../src/core/ids.js";
import { ClusterWorker, holders, rerunsAfterAck } from "../test/postgres/support/cluster.js";
import { PG_URL, sql } from "../test/postgres/support/database.js";
import { maxConcurrentBodies, terminateSessionsOf, uniqueOwner } from "../test/postgres/support/faults.js";
import { eventually, sleep } from "../test/support/wait.js";
import { percentile } from "./percentile.js";

const SHARDS = 8;
const LEASE_MS = 1_500;
const RUNS = 24;
const LIMITED_RUNS = 10;
const LIMIT = 3;

type Fault = "kill" | "drop" | "pause" | "permits";
const FAULTS: readonly Fault[] = ["kill", "drop", "pause", "permits"];

interface Round {
  readonly fault: Fault;
  readonly runs: number;
  readonly finished: number;
  readonly rerunsAfterAck: number;
  readonly maxConcurrent: number | undefined;
  readonly failoverMs: readonly number[];
}

/** The step log's lines with the time (Date.now) each was first seen, read every few milliseconds. */
class StampedLog {
  private readonly seen: { line: string; at: number }[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(readonly path: string) {
    this.timer = setInterval(() => this.read(), 5);
  }

  lines(): string[] {
    this.read();
    return this.seen.map((s) => s.line);
  }

  stamped(): readonly { line: string; at: number }[] {
    this.read();
    return this.seen;
  }

  stop(): void {
    clearInterval(this.timer);
    if (existsSync(this.path)) rmSync(this.path);
  }

  private read(): void {
    if (!existsSync(this.path)) return;
    const all = readFileSync(this.path, "utf8").split("\n");
    all.pop();
    const now = Date.now();
    for (let i = this.seen.length; i < all.length; i++) this.seen.push({ line: all[i] as string, at: now });
  }
}

async function round(fault: Fault): Promise<Round> {
  const schema = `fb_${randomBytes(5).toString("hex")}`;
  const log = new StampedLog(join(tmpdir(), `fusee-fault-bench-${randomBytes(4).toString("hex")}.log`));
  const workers: ClusterWorker[] = [];
  const spawn = async (prefix: string): Promise<ClusterWorker> => {
    const w = new ClusterWorker(uniqueOwner(prefix), { url: PG_URL, schema, leaseMs: LEASE_MS, stepLog: log.path });
    workers.push(w);
    await w.ready;
    return w;
  };
  try {
    const x = await spawn("x");
    const y = await spawn("y");
    await eventually("the shards to split", async () => (await holders(schema)).filter((o) => o === x.owner).length === SHARDS / 2, 15_000);
    const owners = await holders(schema);
    const limited = fault === "permits";
    const ids = Array.from({ length: limited ? LIMITED_RUNS : RUNS }, (_, i) => `${fault}-${i}`);
    await Promise.all(
      ids.map((id, i) => {
        const via = i % 2 === 0 ? x : y;
        return limited
          ? via.send({ op: "startType", type: "cluster-ticking", id, input: { limit: "three", ticks: 25, everyMs: 30 } })
          : via.send({ op: "start", id, input: { n: i, wait: false, stepMs: 100 } });
      }),
    );
    const marker = limited ? "tick " : "ack ";
    await eventually("x to be working", () => log.lines().some((l) => l.startsWith(marker) && l.includes(` ${x.owner}`)), 10_000);

    const faultAt = Date.now();
    if (fault === "kill") await x.kill();
    else if (fault === "drop") await terminateSessionsOf(x.owner);
    else {
      x.process.kill("SIGSTOP");
      await sleep(LEASE_MS * 2.5);
      x.process.kill("SIGCONT");
    }

    const finished = await finishedRuns(y, ids, 30_000);
    const lines = log.lines();
    // A tick is a step body's effect: one after its step was acknowledged counts like a step executed again.
    const asSteps = lines.map((l) => (l.startsWith("tick ") ? `exec ${l.split(" ")[1]} ticking` : l));
    const failoverMs: number[] = [];
    if (fault === "kill") {
      for (const id of ids.filter((i) => owners[shardOf(i, SHARDS)] === x.owner)) {
        const first = log.stamped().find((s) => s.at >= faultAt && s.line.startsWith(`exec ${id} `) && s.line.endsWith(` ${y.owner}`));
        if (first !== undefined) failoverMs.push(first.at - faultAt);
      }
    }
    return {
      fault,
      runs: ids.length,
      finished,
      rerunsAfterAck: rerunsAfterAck(asSteps).length,
      maxConcurrent: limited ? maxConcurrentBodies(lines) : undefined,
      failoverMs,
    };
  } finally {
    for (const w of workers) {
      if (w.process.exitCode === null && w.process.signalCode === null) w.process.kill("SIGCONT");
      await w.kill();
    }
    log.stop();
    await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  }
}

/** How many of the runs completed within `ms`, asked of `via`. */
async function finishedRuns(via: ClusterWorker, ids: readonly string[], ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  let done = 0;
  while (Date.now() < deadline) {
    const statuses = await Promise.all(ids.map((id) => via.send<{ status: string } | null>({ op: "status", id }).catch(() => null)));
    done = statuses.filter((s) => s?.status === "ok").length;
    if (done === ids.length) break;
    await sleep(100);
  }
  return done;
}

export async function runFaultBench(args: readonly string[]): Promise<void> {
  const at = args.indexOf("--rounds");
  const rounds = at >= 0 ? Number(args[at + 1]) : 3;
  const json = args.includes("--json");
  const only = args.indexOf("--faults");
  const faults = only >= 0 ? FAULTS.filter((f) => (args[only + 1] ?? "").split(",").includes(f)) : FAULTS;
  const results: Round[] = [];
  for (const fault of faults) for (let r = 0; r < rounds; r++) results.push(await round(fault));
  const summary = faults.map((fault) => {
    const of = results.filter((r) => r.fault === fault);
    const failover = of.flatMap((r) => r.failoverMs);
    const concurrent = of.flatMap((r) => (r.maxConcurrent === undefined ? [] : [r.maxConcurrent]));
    return {
      fault,
      rounds: of.length,
      runs: of.reduce((n, r) => n + r.runs, 0),
      finished: of.reduce((n, r) => n + r.finished, 0),
      rerunsAfterAck: of.reduce((n, r) => n + r.rerunsAfterAck, 0),
      maxConcurrent: concurrent.length === 0 ? undefined : Math.max(...concurrent),
      failoverP50Ms: failover.length === 0 ? undefined : percentile(Float64Array.from(failover), failover.length, 0.5),
      failoverP99Ms: failover.length === 0 ? undefined : percentile(Float64Array.from(failover), failover.length, 0.99),
    };
  });
  if (json) {
    process.stdout.write(`${JSON.stringify({ leaseMs: LEASE_MS, limit: LIMIT, summary })}\n`);
    return;
  }
  process.stdout.write(`PostgreSQL cluster faults: 2 processes, ${SHARDS} shards, lease ${LEASE_MS} ms, ${rounds} rounds each\n`);
  for (const s of summary) {
    const parts = [
      `${s.fault.padEnd(8)} finished without a restart ${s.finished}/${s.runs}`,
      `effects re-run after ack ${s.rerunsAfterAck}`,
      ...(s.maxConcurrent === undefined ? [] : [`max concurrency ${s.maxConcurrent} (limit ${LIMIT})`]),
      ...(s.failoverP50Ms === undefined ? [] : [`failover p50 ${s.failoverP50Ms} ms p99 ${s.failoverP99Ms} ms`]),
    ];
    process.stdout.write(`  ${parts.join("  |  ")}\n`);
  }
}
