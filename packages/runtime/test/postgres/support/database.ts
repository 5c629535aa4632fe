import { randomBytes } from "node:crypto";
import type pg from "pg";
import { ensureDatabase as ensureDatabaseAt, sqlAt } from "./pg-admin.js";

/** The database the PostgreSQL specifications run against (`.ci/run` starts the server). */
export const PG_URL = process.env.FUSEE_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A schema name no other test uses. */
export function freshSchema(): string {
  return `t_${randomBytes(6).toString("hex")}`;
}

/** Creates the test database when the server does not have it yet (a fresh CI machine). */
export function ensureDatabase(): Promise<void> {
  return ensureDatabaseAt(PG_URL);
}

/** Runs one statement on the test database with a short-lived connection. */
export function sql<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  return sqlAt<R>(PG_URL, text, values);
}

/**
 * Hands out fresh schema names and drops every one of them after the suite. Call inside a
 * `describe`.
 */
export function useSchemas(): () => string {
  const made: string[] = [];
  before(ensureDatabase);
  after(async () => {
    for (const schema of made) await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
  return () => {
    const schema = freshSchema();
    made.push(schema);
    return schema;
  };
}

/** One live entry as stored in a schema's batch rows. */
export interface StoredEntry {
  readonly shard: number;
  readonly seq: number;
  readonly stream: string;
  readonly body: string;
  /** The transaction that stored the entry's row. */
  readonly xmin: string;
}

/** The live entries of a schema (of one shard, if given) as the batch rows hold them, in order. */
export async function storedEntries(schema: string, shard?: number): Promise<StoredEntry[]> {
  const rows = await sql<{ shard: number; seq: string; stream: string; body: Buffer; xmin: string }>(
    `SELECT b.shard, b.seq + x.position - 1 AS seq, x.stream, b.xmin::text AS xmin,
            substring(b.body FROM coalesce(b.ends[x.position - 1], 0) + 1 FOR b.ends[x.position] - coalesce(b.ends[x.position - 1], 0)) AS body
       FROM "${schema}".batches AS b, unnest(b.streams) WITH ORDINALITY AS x(stream, position)
      WHERE x.position <> ALL (b.dead) AND ($1::integer IS NULL OR b.shard = $1)
      ORDER BY b.shard, b.seq, x.position`,
    [shard ?? null],
  );
  return rows.map((r) => ({ shard: r.shard, seq: Number(r.seq), stream: r.stream, body: r.body.toString(), xmin: r.xmin }));
}
