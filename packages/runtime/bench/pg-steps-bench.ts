import { randomBytes } from "node:crypto";
import pg from "pg";
import { shardOf } from "../src/core/ids.js";
import { redact } from "../src/storage/postgres/pg-log.js";
import { epochMs, type SlowInput } from "./pg-failover-steps.js";
import { BenchWorker, type ClusterSettings, waitForSplit } from "./pg-steps-cluster.js";
import { Floor, FLOOR_POOL } from "./pg-steps-floor.js";
import { percentile, round } from "./percentile.js";
import { STEPS } from "./step-workflows.js";

const URL_ENV = "FUSEE_BENCH_PG_URL";
const DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/test";
/** Twelve shards split evenly over 1, 2 and 3 processes. */
const SHARDS = 12;
/**
 * The throughput rounds keep the engine's default lease: 10,000 runs released at once stall a
 * process's event loop for up to about 2 s on a loaded 2-core machine, which a 2 s lease does not
 * survive. The failover round uses a short lease so the takeover it times is short.
 */
const LEASE_MS = 10_000;
const FAILOVER_LEASE_MS = 2_000;
const PROCESSES = [1, 2, 3] as const;
/**
 * The engine processes run with Node's defaults. One more round runs two processes as
 * docs/performance.md advises for thousands of concurrent workflows, with a young generation large
 * enough that a step's objects die there, to show what that setting is worth.
 */
const ADVISED_NODE_OPTIONS = ["--max-semi-space-size=64"];
const WORKFLOWS = 10_000;
const TIMED_WARMUP = 20;
const TIMED_WORKFLOWS = 150;
/**
 * Timed throughput rounds per configuration, each beside a floor round; the ratio is of the
 * medians. An untimed round of as many workflows comes first, so every process has compiled its
 * hot paths and grown its heap, as a long-running service has.
 */
const TIMED_ROUNDS = 3;
const FORWARDED_WORKFLOWS = 1_000;
const SPLIT_TIMEOUT_MS = 30_000;
const ROUND_TIMEOUT_MS = 120_000;
/**
 * Failover runs outlast the kill and the takeover (6 s each at least), so the survivor is under
 * load throughout: 4,000 steps/s, well within what one process sustains.
 */
const FAILOVER_WORKFLOWS = 2_000;
const FAILOVER_INPUT: SlowInput = { n: 0, steps: 12, stepMs: 500 };
const KILL_AFTER_MS = 1_000;
/** The product's target: steps/s with 10,000 concurrent workflows against the one-commit-per-step floor. */
const TARGET_RATIO = 10;

interface ProcessesRow {
  readonly processes: number;
  readonly split_ms: number;
  readonly step_p50_us: number;
  readonly step_p99_us: number;
  readonly steps_per_s: number;
  readonly workflows_per_s: number;
  readonly forwarded_steps_per_s: number | null;
  readonly forwarded_workflows_per_s: number | null;
  readonly floor_steps_per_s: number;
  readonly ratio_to_floor: number;
  readonly rounds: readonly number[];
  readonly floor_rounds: readonly number[];
  readonly node_options: readonly string[];
}

interface Failover {
  readonly lease_ms: number;
  /** From the kill to each run's next step completing on the survivor. */
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  /** From the kill to that step starting. */
  readonly started_p50_ms: number;
  readonly started_p99_ms: number;
  /** From the kill to the survivor taking the run's shard (the lease row's acquired_at). */
  readonly lease_taken_p50_ms: number;
  readonly lease_taken_max_ms: number;
  /** From the survivor taking the shard to the run's next step starting: recovery and replay. */
  readonly recovery_p50_ms: number;
  readonly recovery_p99_ms: number;
  /** Runs of the killed process that went on at the survivor, of `victim_runs`. */
  readonly runs: number;
  readonly victim_runs: number;
  /** Runs of both processes that ended with the right result. */
  readonly completed: number;
}

/**
 * `npm run bench -- steps --engine postgres [--json]`: durable steps on PostgreSQL engines of 1, 2
 * and 3 processes sharing one schema, beside the floor of one `INSERT ... COMMIT` per step on the
 * same database measured in the same run, then the time a killed process's runs take to go on.
 */
export async function runPgStepsBench(args: readonly string[]): Promise<void> {
  const json = args.includes("--json");
  const url = process.env[URL_ENV] ?? DEFAULT_URL;
  const base = `bench_${randomBytes(4).toString("hex")}`;
  const say = (line: string): void => {
    if (!json) process.stdout.write(`${line}\n`);
  };
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  const schemas = [base];
  try {
    say(
      `fusee PostgreSQL steps benchmark: ${STEPS}-step workflows, ${SHARDS} shards, lease ${LEASE_MS} ms (failover ${FAILOVER_LEASE_MS} ms), schemas ${base}* on ${redact(url)}`,
    );
    const settings = await admin.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('synchronous_commit', 'fsync', 'wal_sync_method', 'commit_delay')",
    );
    say(`server: ${settings.rows.map((r) => `${r.name}=${r.setting}`).join(" ")}`);

    const floor = new Floor(url, base);
    await floor.create();
    const insert = await floor.latency();
    say(`floor: INSERT ... COMMIT per step, 1 connection   p50 ${insert.p50_us} us  p99 ${insert.p99_us} us`);
    say(
      `floor throughput: ${WORKFLOWS} workflows × ${STEPS} INSERT ... COMMIT through ${FLOOR_POOL} connections, measured before each timed round`,
    );
    say(
      `engine throughput: ${WORKFLOWS} concurrent workflows over all processes, each process starting only runs of shards it holds; ` +
        `median of ${TIMED_ROUNDS} timed rounds after an untimed one, against the median of the floor rounds`,
    );
    say("engine processes: node with its default options, except where a round says otherwise");

    const processes: ProcessesRow[] = [];
    const rounds = [...PROCESSES.map((p) => ({ p, nodeOptions: [] as string[] })), { p: 2, nodeOptions: ADVISED_NODE_OPTIONS }];
    for (const { p, nodeOptions } of rounds) {
      const schema = `${base}_r${processes.length}`;
      schemas.push(schema);
      const row = await engineRound(admin, { url, schema, leaseMs: LEASE_MS, shards: SHARDS, nodeOptions }, p, floor);
      processes.push(row);
      const label = `${p} process${p === 1 ? "" : "es"}`;
      const flags = nodeOptions.length === 0 ? "" : `, node ${nodeOptions.join(" ")}`;
      say(`${label}${flags} (shards split evenly after ${row.split_ms} ms)`);
      say(`  floor                            ${row.floor_steps_per_s} steps/s  (rounds ${row.floor_rounds.join(", ")})`);
      say(
        `  sequential step, 1 process       p50 ${row.step_p50_us} us  p99 ${row.step_p99_us} us  (${round(row.step_p50_us / insert.p50_us, 2)} × floor p50)`,
      );
      say(
        `  steps/s ${label}: ${row.steps_per_s} (${row.ratio_to_floor} × floor)  ${row.workflows_per_s} workflows/s  (rounds ${row.rounds.join(", ")})`,
      );
      if (row.forwarded_steps_per_s !== null) {
        say(
          `  forwarded: ${FORWARDED_WORKFLOWS} workflows started by a process not holding their shard  ${row.forwarded_steps_per_s} steps/s  ${row.forwarded_workflows_per_s} workflows/s`,
        );
      }
    }

    const schema = `${base}_failover`;
    schemas.push(schema);
    say(
      `failover: 2 processes, ${FAILOVER_WORKFLOWS} workflows of ${FAILOVER_INPUT.steps} × ${FAILOVER_INPUT.stepMs} ms steps, ` +
        `one process SIGKILLed ${KILL_AFTER_MS} ms after the starts`,
    );
    const failover = await failoverRound(admin, { url, schema, leaseMs: FAILOVER_LEASE_MS, shards: SHARDS, nodeOptions: [] });
    say(
      `  runs of the killed process going on at the survivor: ${failover.runs} of ${failover.victim_runs}; runs completed: ${failover.completed} of ${FAILOVER_WORKFLOWS}`,
    );
    say(
      `  kill to shard taken by survivor          p50 ${failover.lease_taken_p50_ms} ms  max ${failover.lease_taken_max_ms} ms  (lease ${FAILOVER_LEASE_MS} ms)`,
    );
    say(`  shard taken to run's next step started   p50 ${failover.recovery_p50_ms} ms  p99 ${failover.recovery_p99_ms} ms`);
    say(`  kill to next step started on survivor    p50 ${failover.started_p50_ms} ms  p99 ${failover.started_p99_ms} ms`);
    say(`  kill to next step completed on survivor  p50 ${failover.p50_ms} ms  p99 ${failover.p99_ms} ms  max ${failover.max_ms} ms`);
    const best = Math.max(...processes.filter((r) => r.node_options.length === 0).map((r) => r.ratio_to_floor));
    const advised = Math.max(...processes.filter((r) => r.node_options.length > 0).map((r) => r.ratio_to_floor));
    const targetMet = best >= TARGET_RATIO;
    say(
      `target: steps/s at least ${TARGET_RATIO} × floor with ${WORKFLOWS} concurrent workflows: ${targetMet ? "met" : "not met"} ` +
        `(best ${best} × with Node's defaults; ${advised} × with node ${ADVISED_NODE_OPTIONS.join(" ")})`,
    );

    if (json) {
      process.stdout.write(
        `${JSON.stringify({
          server: Object.fromEntries(settings.rows.map((r) => [r.name, r.setting])),
          shards: SHARDS,
          workflows: WORKFLOWS,
          lease_ms: LEASE_MS,
          floor_pool: FLOOR_POOL,
          floor_insert_p50_us: insert.p50_us,
          floor_insert_p99_us: insert.p99_us,
          floor_steps_per_s: median(processes.map((r) => r.floor_steps_per_s)),
          processes,
          target_ratio: TARGET_RATIO,
          target_met: targetMet,
          failover,
        })}\n`,
      );
    }
  } finally {
    for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

/** After a warm-up, sequential step latency in one process, then throughput of every process starting runs of its own shards. */
async function engineRound(admin: pg.Pool, s: ClusterSettings, p: number, floor: Floor): Promise<ProcessesRow> {
  const owners = Array.from({ length: p }, (_, i) => `bench-p${p}-w${i}`);
  return withWorkers(s, owners, async (workers) => {
    const { held, ms } = await waitForSplit(admin, s.schema, owners, SPLIT_TIMEOUT_MS);
    // Each process starts only runs of shards it holds, so no start or result is forwarded: the
    // owner's own path, which a caller routing by shard gets. With `forward`, each process starts
    // the runs of the next process's shards instead.
    const concurrently = (prefix: string, count: number, forward = false): Promise<{ t0: number; t1: number }[]> => {
      const ids = idsOf(prefix, held).slice(0, count);
      const starter = (owner: string): string => (forward ? owners[(owners.indexOf(owner) + p - 1) % p]! : owner);
      const own = (w: BenchWorker): string[] => ids.filter((x) => starter(x.owner) === w.owner).map((x) => x.id);
      return within(
        Promise.all(workers.map((w) => w.send<{ t0: number; t1: number }>({ op: "plain", ids: own(w) }))),
        `${count} concurrent workflows`,
      );
    };
    await concurrently(`warm-${p}-`, WORKFLOWS);

    const timedIds = idsOf(`timed-${p}-`, held)
      .filter((x) => x.owner === owners[0])
      .slice(0, TIMED_WARMUP + TIMED_WORKFLOWS);
    const samples = await within(
      workers[0]!.send<number[]>({ op: "timed", ids: timedIds.map((x) => x.id), warm: TIMED_WARMUP }),
      "sequential steps",
    );
    const latencies = Float64Array.from(samples);
    // Floor and engine rounds alternate, so load from elsewhere on the machine weighs on both alike.
    const rounds: number[] = [];
    const floorRounds: number[] = [];
    for (let r = 0; r < TIMED_ROUNDS; r++) {
      floorRounds.push(await floor.throughput(WORKFLOWS));
      rounds.push(rate(await concurrently(`plain-${p}-${r}-`, WORKFLOWS), WORKFLOWS));
    }
    const stepsPerS = median(rounds);
    const floorSteps = median(floorRounds);
    // For comparison, the path a caller takes without routing by shard: start and result go
    // through the request table to the owner and back.
    const forwarded = p === 1 ? null : rate(await concurrently(`fwd-${p}-`, FORWARDED_WORKFLOWS, true), FORWARDED_WORKFLOWS);
    return {
      processes: p,
      split_ms: ms,
      step_p50_us: round(percentile(latencies, latencies.length, 0.5)),
      step_p99_us: round(percentile(latencies, latencies.length, 0.99)),
      steps_per_s: stepsPerS,
      workflows_per_s: Math.round(stepsPerS / STEPS),
      forwarded_steps_per_s: forwarded,
      forwarded_workflows_per_s: forwarded === null ? null : Math.round(forwarded / STEPS),
      floor_steps_per_s: floorSteps,
      ratio_to_floor: round(stepsPerS / floorSteps, 2),
      rounds,
      floor_rounds: floorRounds,
      node_options: s.nodeOptions,
    };
  });
}

/** Kills one of two processes under load and times how long its runs take to go on at the survivor. */
async function failoverRound(admin: pg.Pool, s: ClusterSettings): Promise<Failover> {
  const owners = ["bench-f-w0", "bench-f-w1"];
  return withWorkers(s, owners, async ([survivor, victim]) => {
    const { held } = await waitForSplit(admin, s.schema, owners, SPLIT_TIMEOUT_MS);
    const ids = idsOf("slow-", held).slice(0, FAILOVER_WORKFLOWS);
    const victimIds = ids.filter((x) => x.owner === victim!.owner).map((x) => x.id);
    await within(
      Promise.all(
        [survivor!, victim!].map((w) =>
          w.send({ op: "slow", ids: ids.filter((x) => x.owner === w.owner).map((x) => x.id), input: FAILOVER_INPUT }),
        ),
      ),
      "failover starts",
    );
    await new Promise((r) => setTimeout(r, KILL_AFTER_MS));
    const killedAt = epochMs();
    await victim!.kill();
    await waitForSplit(admin, s.schema, [survivor!.owner], SPLIT_TIMEOUT_MS);
    const completed = await within(
      survivor!.send<number>({ op: "results", ids: ids.map((x) => x.id), expect: FAILOVER_INPUT.steps }),
      "failover results",
    );
    // The database and this process read the same machine's clock, so lease times compare with the kill.
    const { rows } = await admin.query<{ at: number }>(
      `SELECT extract(epoch FROM acquired_at)::float8 * 1000 AS at FROM "${s.schema}".leases ORDER BY shard`,
    );
    const acquired = rows.map((r) => r.at);
    const times = await survivor!.send<({ started: number; completed: number } | null)[]>({
      op: "resumed",
      ids: victimIds,
      after: killedAt,
    });
    const resumed = victimIds.flatMap((id, i) => (times[i] ? [{ ...times[i], acquired: acquired[shardOf(id, s.shards)]! }] : []));
    const since = (f: (t: (typeof resumed)[number]) => number): Float64Array => Float64Array.from(resumed.map(f));
    const done = since((t) => t.completed - killedAt);
    const started = since((t) => t.started - killedAt);
    const taken = since((t) => t.acquired - killedAt);
    const recovered = since((t) => t.started - t.acquired);
    const ms = (a: Float64Array, q: number): number => round(percentile(a, a.length, q), 0);
    return {
      lease_ms: s.leaseMs,
      p50_ms: ms(done, 0.5),
      p99_ms: ms(done, 0.99),
      max_ms: ms(done, 1),
      started_p50_ms: ms(started, 0.5),
      started_p99_ms: ms(started, 0.99),
      lease_taken_p50_ms: ms(taken, 0.5),
      lease_taken_max_ms: ms(taken, 1),
      recovery_p50_ms: ms(recovered, 0.5),
      recovery_p99_ms: ms(recovered, 0.99),
      runs: resumed.length,
      victim_runs: victimIds.length,
      completed,
    };
  });
}

/**
 * Starts engine processes one after another (the first creates the schema), runs `body`, and kills
 * every process however `body` ends, so a failed round leaves nothing running.
 */
async function withWorkers<T>(s: ClusterSettings, owners: readonly string[], body: (workers: BenchWorker[]) => Promise<T>): Promise<T> {
  const workers: BenchWorker[] = [];
  try {
    for (const owner of owners) {
      const w = new BenchWorker(owner, s);
      workers.push(w);
      await within(w.ready, `engine process ${owner} to open`);
    }
    return await body(workers);
  } finally {
    await Promise.all(workers.map((w) => w.kill()));
  }
}

/** Steps per second of `count` workflows, from the first process's first start to the last one's last result. */
function rate(spans: readonly { t0: number; t1: number }[], count: number): number {
  return Math.round((count * STEPS) / ((Math.max(...spans.map((x) => x.t1)) - Math.min(...spans.map((x) => x.t0))) / 1000));
}

/** Workflow IDs with a prefix, each beside the process holding its shard. */
function idsOf(prefix: string, held: readonly string[]): { id: string; owner: string }[] {
  return Array.from({ length: WORKFLOWS + 1_000 }, (_, i) => {
    const id = `${prefix}${i}`;
    return { id, owner: held[shardOf(id, held.length)]! };
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The promise, or an error naming what took longer than the round may. */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ROUND_TIMEOUT_MS} ms`)), ROUND_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
