import { randomBytes } from "node:crypto";
import pg from "pg";

/** The database the PostgreSQL specifications run against (`.ci/run` starts the server). */
export const PG_URL = process.env.FUSEE_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A schema name no other test uses. */
export function freshSchema(): string {
  return `t_${randomBytes(6).toString("hex")}`;
}

/** Runs one statement on the test database with a short-lived connection. */
export async function sql<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Hands out fresh schema names and drops every one of them after the suite. Call inside a
 * `describe`.
 */
export function useSchemas(): () => string {
  const made: string[] = [];
  after(async () => {
    for (const schema of made) await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
  return () => {
    const schema = freshSchema();
    made.push(schema);
    return schema;
  };
}
