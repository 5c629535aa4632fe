/*
 * Statements on a PostgreSQL server for tests and simulations, with no mocha hooks, so code outside
 * a test file can use it too (the cluster simulation loads it from the runtime's build output).
 */
import pg from "pg";

/** Creates the database `url` names when the server does not have it yet (a fresh CI machine). */
export async function ensureDatabase(url: string): Promise<void> {
  const server = new URL(url);
  const name = decodeURIComponent(server.pathname.slice(1));
  server.pathname = "/postgres";
  const client = new pg.Client({ connectionString: server.toString() });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    // Another process may create it between the check and the statement: that is as good.
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`).catch(() => undefined);
  } finally {
    await client.end();
  }
}

/** Runs one statement on the database at `url` with a short-lived connection. */
export async function sqlAt<R extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}
