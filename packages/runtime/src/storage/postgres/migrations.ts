/*
 * The schema of a PostgreSQL log, as numbered migrations. Each runs in its own transaction and is
 * recorded in the `migrations` table in that same transaction, so a migration is either applied and
 * recorded or neither. Migrations are append-only: a released one is never edited, a change is a
 * new number. A session advisory lock keyed on the schema serializes processes that open the same
 * schema at once, so exactly one of them applies each migration.
 */
import type pg from "pg";
import { ConfigError, StorageError } from "../../core/errors.js";
import type { Tables } from "./schema.js";

/** One step of the schema. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  /** The statements, for the given tables. */
  sql(t: Tables): string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "entries, leases and owners",
    sql: (t) => `
      CREATE TABLE ${t.settings} (
        key text PRIMARY KEY,
        value text NOT NULL
      );
      -- A shard's entries in append order (seq grows per shard). Only the holder of the shard's
      -- lease inserts, and every insert checks the lease in the same statement.
      CREATE TABLE ${t.entries} (
        shard integer NOT NULL,
        seq bigint NOT NULL,
        stream text NOT NULL,
        body bytea NOT NULL,
        PRIMARY KEY (shard, seq)
      );
      -- Streams are found by a digest of their key, so a long key never exceeds a btree row.
      CREATE INDEX entries_by_stream ON ${t.entries} (shard, md5(stream), seq);
      -- One row per shard. The epoch grows with every takeover; expires_at is on the database clock.
      CREATE TABLE ${t.leases} (
        shard integer PRIMARY KEY,
        owner text,
        epoch bigint NOT NULL DEFAULT 0,
        expires_at timestamptz NOT NULL DEFAULT '-infinity',
        acquired_at timestamptz
      );
      -- Live processes, for spreading shards evenly; a row expires like a lease.
      CREATE TABLE ${t.owners} (
        owner text PRIMARY KEY,
        expires_at timestamptz NOT NULL,
        started_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
    `,
  },
  {
    version: 2,
    name: "requests and replies between cluster processes",
    sql: (t) => `
      -- An operation on a run, written by a process that does not hold the run's shard for the
      -- process that does; it stays until the owner has written the reply.
      CREATE TABLE ${t.requests} (
        id uuid PRIMARY KEY,
        shard integer NOT NULL,
        kind text NOT NULL,
        payload bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX requests_by_shard ON ${t.requests} (shard, created_at);
      -- The outcome of a request ('ok' or 'error'), deleted by the process that asked once read.
      CREATE TABLE ${t.replies} (
        id uuid PRIMARY KEY,
        outcome text NOT NULL,
        payload bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
    `,
  },
];

/** The newest migration this code knows. */
export const LATEST_VERSION = MIGRATIONS.reduce((v, m) => Math.max(v, m.version), 0);

/** What {@link migrate} found and did. */
export interface MigrationResult {
  /** Version before the run (0 for a new schema). */
  readonly from: number;
  /** Versions applied by this run, in order. */
  readonly applied: readonly number[];
}

/**
 * Brings the schema up to {@link LATEST_VERSION}, creating it if needed. A schema already past
 * that version was written by newer code and is refused with a `ConfigError`.
 */
export async function migrate(pool: pg.Pool, t: Tables, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationResult> {
  const latest = migrations.reduce((v, m) => Math.max(v, m.version), 0);
  const client = await pool.connect();
  const key = `fusee.migrations:${t.schema}`;
  // The client goes back to the pool only when the advisory lock is known to be released.
  let reusable = false;
  try {
    await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [key]);
    try {
      return await applyPending(client, t, migrations, latest);
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [key]);
      reusable = true;
    }
  } finally {
    client.release(!reusable);
  }
}

async function applyPending(
  client: pg.PoolClient,
  t: Tables,
  migrations: readonly Migration[],
  latest: number,
): Promise<MigrationResult> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${t.quoted}`);
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${t.migrations} (
       version integer PRIMARY KEY,
       name text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
     )`,
  );
  const found = await client.query<{ version: number; name: string }>(
    `SELECT version, name FROM ${t.migrations} ORDER BY version DESC LIMIT 1`,
  );
  const current = found.rows[0];
  const from = current?.version ?? 0;
  if (from > latest) {
    throw new ConfigError(
      `the PostgreSQL schema "${t.schema}" is at migration ${from} ("${current?.name}", table ${t.migrations}) ` +
        `but this version of fusee knows migrations up to ${latest}; upgrade fusee, or use another schema`,
    );
  }
  const applied: number[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= from) continue;
    try {
      await client.query("BEGIN");
      await client.query(m.sql(t));
      await client.query(`INSERT INTO ${t.migrations} (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw new StorageError(
        `migration ${m.version} ("${m.name}") of the PostgreSQL schema "${t.schema}" failed and was rolled back: ` +
          (err as Error).message,
        { cause: err },
      );
    }
    applied.push(m.version);
  }
  return { from, applied };
}
