/*
 * The database side of the cluster simulation: a database of its own on the PostgreSQL server, a
 * schema per schedule, an audit of every batch a process stored (written by a trigger in the
 * inserting transaction, so it sees the lease row exactly as the insert's own check did), and the
 * sessions of one process, to cut them off.
 */
import type pg from "pg";
import { Config, Engine } from "@fusee/runtime";
import type * as Admin from "../../../packages/runtime/test/postgres/support/pg-admin.js";

// The runtime's PostgreSQL test support is not part of its package: loaded from its build output,
// whose place relative to this file's differs between the source and the build.
const admin = (await import(
  new URL("../../../../packages/runtime/dist/test/postgres/support/pg-admin.js", import.meta.url).href
)) as typeof Admin;

/** The server the simulation uses, and the database on it (created when missing). */
export const SIM_PG_URL = process.env.FUSEE_SIM_PG_URL ?? "postgres://postgres@127.0.0.1:5432/fusee_simcluster";

export function sql<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  return admin.sqlAt<R>(SIM_PG_URL, text, values);
}

export function ensureDatabase(): Promise<void> {
  return admin.ensureDatabase(SIM_PG_URL);
}

/**
 * Creates the schema's tables (an engine opened once and shut down: no process holds a lease
 * afterwards) and the audit of batch inserts.
 */
export async function prepareSchema(schema: string, shards: number, owner: string): Promise<void> {
  const engine = await Engine.open(Config.postgres(SIM_PG_URL, { schema, owner, leaseMs: 1_000 }).shards(shards), { workflows: [] });
  await engine.shutdown();
  await sql(`
    CREATE TABLE "${schema}".sim_audit (
      n bigserial PRIMARY KEY,
      shard integer NOT NULL,
      seq bigint NOT NULL,
      writer text NOT NULL,
      lease_owner text,
      lease_epoch bigint,
      lease_live boolean
    );
    CREATE FUNCTION "${schema}".sim_audit_batch() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO "${schema}".sim_audit (shard, seq, writer, lease_owner, lease_epoch, lease_live)
        SELECT NEW.shard, NEW.seq, current_setting('application_name'), l.owner, l.epoch, l.expires_at > statement_timestamp()
          FROM "${schema}".leases AS l WHERE l.shard = NEW.shard;
      RETURN NEW;
    END $$;
    CREATE TRIGGER sim_audit AFTER INSERT ON "${schema}".batches FOR EACH ROW EXECUTE FUNCTION "${schema}".sim_audit_batch();
  `);
}

export async function dropSchema(schema: string): Promise<void> {
  await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * Writes that break fencing, and how many takeovers wrote to their shard: a batch stored by a process the lease row did not name (or not live
 * when the statement began), a shard whose epochs go back in the order its rows were inserted, or
 * an epoch written by two processes. Insertion order, not `seq`: a shard's newest rows are deleted
 * when every entry in them is dropped (a deleted schedule's stream), and a takeover continues from
 * the highest `seq` left, so the next epoch may write `seq`s an earlier one wrote before.
 */
export async function fencingBreaches(schema: string): Promise<{ breaches: string[]; takeovers: number }> {
  const rows = await sql<{
    shard: number;
    seq: string;
    writer: string;
    lease_owner: string | null;
    lease_epoch: string;
    lease_live: boolean;
  }>(`SELECT shard, seq, writer, lease_owner, lease_epoch, lease_live FROM "${schema}".sim_audit ORDER BY shard, n`);
  const out: string[] = [];
  const writers = new Map<string, string>();
  const lastEpoch = new Map<number, number>();
  for (const r of rows) {
    const epoch = Number(r.lease_epoch);
    const at = `shard ${r.shard} seq ${r.seq}`;
    if (r.writer !== `fusee ${r.lease_owner ?? ""}`.slice(0, 63))
      out.push(`${at} was stored by "${r.writer}" while the lease named "${r.lease_owner}" at epoch ${epoch}`);
    if (!r.lease_live) out.push(`${at} was stored by "${r.writer}" under a lease expired when its statement began`);
    const key = `${r.shard}/${epoch}`;
    const w = writers.get(key);
    if (w !== undefined && w !== r.writer) out.push(`${at}: epoch ${epoch} written by "${w}" and "${r.writer}"`);
    writers.set(key, r.writer);
    if (epoch < (lastEpoch.get(r.shard) ?? 0))
      out.push(`${at} was written at epoch ${epoch} after a row of epoch ${lastEpoch.get(r.shard)} was`);
    lastEpoch.set(r.shard, Math.max(epoch, lastEpoch.get(r.shard) ?? 0));
  }
  // Each shard's first lease writes at one epoch; every further epoch written to is a takeover.
  return { breaches: out, takeovers: writers.size - lastEpoch.size };
}

/** The live lease holder of each shard (undefined for a free or expired lease). */
export async function holders(schema: string): Promise<(string | undefined)[]> {
  const rows = await sql<{ owner: string | null; live: boolean }>(
    `SELECT owner, expires_at > clock_timestamp() AS live FROM "${schema}".leases ORDER BY shard`,
  );
  return rows.map((r) => (r.live && r.owner !== null ? r.owner : undefined));
}

/** Terminates the database sessions of one engine process; returns how many there were. */
export async function terminateSessionsOf(owner: string): Promise<number> {
  const rows = await sql<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()`, [
    `fusee ${owner}`.slice(0, 63),
  ]);
  for (const { pid } of rows) await sql("SELECT pg_terminate_backend($1)", [pid]);
  return rows.length;
}
