import { randomBytes } from "node:crypto";
import pg from "pg";
import { eventually } from "../../support/wait.js";
import { PG_URL, sql } from "./database.js";

/** An owner name no other test (on this shared server) uses, so its sessions can be told apart. */
export function uniqueOwner(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString("hex")}`;
}

/**
 * Terminates the database sessions of one engine process (its connections carry the application
 * name `fusee <owner>`) and returns how many there were; no other session is touched.
 */
export async function terminateSessionsOf(owner: string): Promise<number> {
  const rows = await sql<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()`, [
    `fusee ${owner}`.slice(0, 63),
  ]);
  for (const { pid } of rows) await sql("SELECT pg_terminate_backend($1)", [pid]);
  return rows.length;
}

/**
 * Has `append` insert into shard 0 of `schema` while another session holds the shard's lease row,
 * and terminates every session of `owner` once the insert waits on that row: the statement dies
 * before it can commit. Resolves with what the append rejected with (undefined if it did not); the
 * lease row is let go before this returns.
 */
export async function appendCutOnLeaseRow(schema: string, owner: string, append: () => Promise<unknown>): Promise<unknown> {
  const blocker = new pg.Client({ connectionString: PG_URL });
  await blocker.connect();
  try {
    await blocker.query("BEGIN");
    await blocker.query(`SELECT 1 FROM "${schema}".leases WHERE shard = 0 FOR UPDATE`);
    const pending = append().then(
      () => undefined,
      (e: unknown) => e,
    );
    await eventually("the insert to wait for the lease row", async () => {
      const rows = await sql(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [`fusee ${owner}`]);
      return rows.length === 1;
    });
    await terminateSessionsOf(owner);
    return await pending;
  } finally {
    await blocker.query("ROLLBACK").catch(() => undefined);
    await blocker.end().catch(() => undefined);
  }
}

/**
 * The most step bodies that ran at once, from the `tick <id> <owner> <attempt> <ms> <body>` lines
 * of a step log (`body` numbers the bodies a process began): a body runs from its first tick to its
 * last, in the order the lines were written.
 */
export function maxConcurrentBodies(lines: readonly string[]): number {
  const spans = new Map<string, [number, number]>();
  lines.forEach((l, at) => {
    if (!l.startsWith("tick ")) return;
    const [, id, owner, attempt, , body] = l.split(" ") as [string, string, string, string, string, string];
    const key = `${id} ${owner} ${attempt} ${body}`;
    const span = spans.get(key);
    if (span === undefined) spans.set(key, [at, at]);
    else span[1] = at;
  });
  let most = 0;
  for (const [, [from]] of spans) {
    let running = 0;
    for (const [, [a, b]] of spans) if (a <= from && from <= b) running++;
    most = Math.max(most, running);
  }
  return most;
}
