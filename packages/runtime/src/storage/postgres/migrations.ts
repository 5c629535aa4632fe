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
  {
    version: 3,
    name: "permits of limits shared by cluster processes",
    sql: (t) => `
      -- A permit held for one attempt of a step. It expires like a lease unless its holder renews
      -- it, so the permits of a process that died come back.
      CREATE TABLE ${t.permits} (
        token uuid PRIMARY KEY,
        name text NOT NULL,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX permits_by_name ON ${t.permits} (name, expires_at);
      CREATE INDEX permits_by_holder ON ${t.permits} (holder);
      CREATE TABLE ${t.rates} (
        name text PRIMARY KEY,
        last_at timestamptz NOT NULL
      );
      -- Takes a permit of limit p_name: 0 when taken, -1 when p_max live permits are held, else the
      -- milliseconds until the rate lets the next attempt start. The advisory lock serializes the
      -- takers of one limit; each statement of this volatile function after it sees what they
      -- committed.
      CREATE FUNCTION ${t.takePermit}(p_name text, p_token uuid, p_holder text, p_lease_ms integer, p_max integer, p_interval_ms double precision)
      RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_last timestamptz;
        v_wait double precision;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('${t.permits} ' || p_name));
        IF p_max > 0 AND (SELECT count(*) FROM ${t.permits} WHERE name = p_name AND expires_at > clock_timestamp()) >= p_max THEN
          RETURN -1;
        END IF;
        IF p_interval_ms > 0 THEN
          SELECT last_at INTO v_last FROM ${t.rates} WHERE name = p_name;
          IF v_last IS NOT NULL THEN
            v_wait := p_interval_ms - extract(epoch FROM clock_timestamp() - v_last) * 1000;
            IF v_wait > 0 THEN
              RETURN greatest(1, ceil(v_wait))::integer;
            END IF;
          END IF;
          INSERT INTO ${t.rates} (name, last_at) VALUES (p_name, clock_timestamp())
            ON CONFLICT (name) DO UPDATE SET last_at = excluded.last_at;
        END IF;
        INSERT INTO ${t.permits} (token, name, holder, expires_at)
          VALUES (p_token, p_name, p_holder, clock_timestamp() + p_lease_ms * interval '1 millisecond');
        RETURN 0;
      END
      $$;
    `,
  },
  {
    version: 4,
    name: "the process asking a cluster request",
    sql: (t) => `
      -- The owner name of the process that asked, so the answering process wakes it.
      ALTER TABLE ${t.requests} ADD COLUMN asker text;
    `,
  },
  {
    version: 5,
    name: "streams found by a 64-bit hash",
    sql: (t) => `
      -- The md5 index cost more on every insert than the row it indexes: md5 runs per row and its
      -- keys are 32-character text. A 64-bit hash finds a stream as well; readers compare the
      -- stream itself once the index has narrowed the rows, so a collision costs a row read.
      DROP INDEX ${t.quoted}.entries_by_stream;
      CREATE INDEX entries_by_stream_hash ON ${t.entries} (shard, hashtextextended(stream, 0));
    `,
  },
  {
    version: 6,
    name: "one row per batch",
    sql: (t) => `
      -- A committed batch is one row: its entries are seq, seq + 1, ... in order, entry i (1-based)
      -- has key streams[i] and the body bytes from ends[i - 1] (0 for the first) to ends[i], and
      -- dead lists the positions of entries dropped while others in the row are live. A row per
      -- entry cost the database a heap tuple and two index entries per step; the holder of a shard
      -- finds a stream's entries through its own index of the rows, built when it takes the lease.
      CREATE TABLE ${t.batches} (
        shard integer NOT NULL,
        seq bigint NOT NULL,
        streams text[] NOT NULL,
        ends integer[] NOT NULL,
        dead integer[] NOT NULL DEFAULT '{}',
        body bytea NOT NULL,
        PRIMARY KEY (shard, seq)
      );
      -- Bodies are stored uncompressed: compressing every batch costs more time than the space is
      -- worth, and reading one entry then fetches only the chunks its bytes are in.
      ALTER TABLE ${t.batches} ALTER COLUMN body SET STORAGE EXTERNAL;
      INSERT INTO ${t.batches} (shard, seq, streams, ends, body)
        SELECT shard, seq, ARRAY[stream], ARRAY[octet_length(body)], body FROM ${t.entries};
      DROP TABLE ${t.entries};
    `,
  },
  {
    version: 7,
    name: "the last seq of a shard kept with its lease",
    sql: (t) => `
      -- The highest seq a statement that drops numbered up to. A drop may delete a shard's last rows,
      -- or store no row for a batch it cancelled, so the rows alone can show a lower last seq than
      -- the one used; the next holder numbers from the higher of the two, and no seq comes back.
      ALTER TABLE ${t.leases} ADD COLUMN last_seq bigint NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 8,
    name: "requests fenced by the asking process's lease",
    sql: (t) => `
      -- A request asked on behalf of a shard the asking process holds (a schedule's start) names
      -- that shard and the epoch of its lease: it is performed only while the lease row still names
      -- the asker at that epoch and has not expired. Requests without a fence are performed as before.
      ALTER TABLE ${t.requests} ADD COLUMN fence_shard integer, ADD COLUMN fence_epoch bigint;
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

async function applyPending(client: pg.PoolClient, t: Tables, migrations: readonly Migration[], latest: number): Promise<MigrationResult> {
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
        `migration ${m.version} ("${m.name}") of the PostgreSQL schema "${t.schema}" failed and was rolled back: ` + (err as Error).message,
        { cause: err },
      );
    }
    applied.push(m.version);
  }
  return { from, applied };
}
