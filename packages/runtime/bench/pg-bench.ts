import { randomBytes } from "node:crypto";
import pg from "pg";
import { type PostgresLog, openPostgresLog, redact } from "../src/storage/postgres/pg-log.js";
import { measureAppendThroughput } from "./append-throughput.js";
import { percentile, round } from "./percentile.js";

const URL_ENV = "FUSEE_BENCH_PG_URL";
const DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/test";
const RECORD_BYTES = 100;
const WARMUP = 200;
/** Floor and sequential appends alternate in blocks, so load on the server hits both alike. */
const BLOCKS = 6;
const BLOCK_ROUNDS = 250;
const THROUGHPUT_MS = 1500;
const APPENDERS = [1, 16, 256] as const;
/** Connections of the floor's concurrent run: one INSERT ... COMMIT per record on each. */
const FLOOR_CONNECTIONS = 16;

interface Latency {
  readonly p50_us: number;
  readonly p99_us: number;
}

interface Row {
  readonly appenders: number;
  readonly records_per_s: number;
  readonly records_per_batch: number;
  readonly ack_p50_us: number;
  readonly ack_p99_us: number;
}

/**
 * `npm run bench -- pg [--json]`: the PostgreSQL log against the floor of one `INSERT ... COMMIT`
 * per record on the same database, in one run. The server is `$FUSEE_BENCH_PG_URL` (default
 * the local `test` database); everything lives in a fresh schema dropped at the end.
 */
export async function runPgBench(args: readonly string[]): Promise<void> {
  const json = args.includes("--json");
  const url = process.env[URL_ENV] ?? DEFAULT_URL;
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  const progress = (line: string): void => {
    if (!json) process.stdout.write(`${line}\n`);
  };
  const admin = new pg.Pool({ connectionString: url, max: FLOOR_CONNECTIONS });
  let log: PostgresLog | undefined;
  try {
    progress(`fusee PostgreSQL log benchmark: ${RECORD_BYTES}-byte records, 1 shard, schema ${schema} on ${redact(url)}`);
    log = await openPostgresLog({ url, schema, shards: 1, claim: "all" });
    await admin.query(`CREATE TABLE "${schema}".floor (id bigserial PRIMARY KEY, stream text NOT NULL, body bytea NOT NULL)`);
    const settings = await admin.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('synchronous_commit', 'fsync', 'wal_sync_method', 'commit_delay')",
    );
    const server = Object.fromEntries(settings.rows.map((r) => [r.name, r.setting]));
    progress(
      `server: ${Object.entries(server)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}`,
    );

    const { floor, sequential } = await sequentialAgainstFloor(admin, log, schema);
    const floorConcurrent = await floorThroughput(admin, schema);
    const rows: Row[] = [];
    for (const appenders of APPENDERS) rows.push(await measureThroughput(log, appenders));

    const result = {
      server,
      floor_p50_us: floor.p50_us,
      floor_p99_us: floor.p99_us,
      floor_records_per_s_1_connection: round(1e6 / floor.p50_us, 0),
      floor_records_per_s_16_connections: floorConcurrent,
      append_p50_us: sequential.p50_us,
      append_p99_us: sequential.p99_us,
      append_ratio: round(sequential.p50_us / floor.p50_us, 3),
      throughput: rows,
    };
    if (json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }
    const lines = [
      "",
      `floor: INSERT ... COMMIT per record, 1 connection     p50 ${floor.p50_us} us   p99 ${floor.p99_us} us`,
      `floor: INSERT ... COMMIT per record, ${FLOOR_CONNECTIONS} connections  ${floorConcurrent} records/s`,
      `sequential append, 1 appender                        p50 ${sequential.p50_us} us   p99 ${sequential.p99_us} us` +
        `   ratio to floor p50 ${result.append_ratio}`,
      "",
      "appenders   records/s  records/batch  ack p50 us  ack p99 us",
      ...rows.map(
        (r) =>
          `${pad(r.appenders, 9)}  ${pad(r.records_per_s, 10)}  ${pad(r.records_per_batch, 13)}  ${pad(r.ack_p50_us, 10)}  ${pad(r.ack_p99_us, 10)}`,
      ),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await log?.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

/** Sequential latency of the floor and of `append`, in alternating blocks. */
async function sequentialAgainstFloor(pool: pg.Pool, log: PostgresLog, schema: string): Promise<{ floor: Latency; sequential: Latency }> {
  const total = BLOCKS * BLOCK_ROUNDS;
  const floor = new Float64Array(total);
  const sequential = new Float64Array(total);
  const body = Buffer.alloc(RECORD_BYTES, 0x61);
  const entry = { stream: "run-000001", body };
  const client = await pool.connect();
  const insert = {
    name: "floor_insert",
    text: `INSERT INTO "${schema}".floor (stream, body) VALUES ($1, $2)`,
    values: [entry.stream, body],
  };
  try {
    for (let i = 0; i < WARMUP; i++) {
      await client.query(insert);
      await log.append(0, entry);
    }
    for (let b = 0; b < BLOCKS; b++) {
      for (let i = b * BLOCK_ROUNDS; i < (b + 1) * BLOCK_ROUNDS; i++) {
        const t0 = performance.now();
        await client.query(insert);
        floor[i] = (performance.now() - t0) * 1000;
      }
      for (let i = b * BLOCK_ROUNDS; i < (b + 1) * BLOCK_ROUNDS; i++) {
        const t0 = performance.now();
        await log.append(0, entry);
        sequential[i] = (performance.now() - t0) * 1000;
      }
    }
  } finally {
    client.release();
  }
  const latency = (samples: Float64Array): Latency => ({
    p50_us: round(percentile(samples, total, 0.5)),
    p99_us: round(percentile(samples, total, 0.99)),
  });
  return { floor: latency(floor), sequential: latency(sequential) };
}

/** Records per second with one INSERT ... COMMIT per record on each of several connections. */
async function floorThroughput(pool: pg.Pool, schema: string): Promise<number> {
  const body = Buffer.alloc(RECORD_BYTES, 0x63);
  let count = 0;
  let stop = false;
  const started = performance.now();
  const timer = setTimeout(() => (stop = true), THROUGHPUT_MS);
  await Promise.all(
    Array.from({ length: FLOOR_CONNECTIONS }, async (_, i) => {
      const client = await pool.connect();
      try {
        const insert = {
          name: "floor_insert",
          text: `INSERT INTO "${schema}".floor (stream, body) VALUES ($1, $2)`,
          values: [`c${i}`, body],
        };
        while (!stop) {
          await client.query(insert);
          count++;
        }
      } finally {
        client.release();
      }
    }),
  );
  clearTimeout(timer);
  return Math.round(count / ((performance.now() - started) / 1000));
}

async function measureThroughput(log: PostgresLog, appenders: number): Promise<Row> {
  const { records_per_sync, ...row } = await measureAppendThroughput(log, {
    appenders,
    shards: 1,
    recordBytes: RECORD_BYTES,
    durationMs: THROUGHPUT_MS,
    maxSamples: 2_000_000,
  });
  // One INSERT statement carries each batch, so a "sync" here is a batch.
  return { ...row, records_per_batch: records_per_sync };
}

function pad(value: number, width: number): string {
  return String(value).padStart(width);
}
