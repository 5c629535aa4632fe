/*
 * Reading the batch rows of a shard (see migration 6): pages of rows in seq order, the live entries
 * of a row, one stream's entries, and a row rewritten without the bodies of its dead entries.
 */
import type pg from "pg";
import type { LogEntry } from "../log.js";
import type { Tables } from "./schema.js";

/** A batch row as the driver returns it; `body` only when asked for. */
export interface BatchRow {
  readonly seq: string;
  readonly streams: string[];
  readonly ends: number[];
  readonly dead: number[];
  readonly body?: Buffer;
}

/** The body of the entry at 1-based position `x.position` of batch row `b`, in SQL. */
const ENTRY_BODY =
  "substring(b.body FROM coalesce(b.ends[x.position - 1], 0) + 1 FOR b.ends[x.position] - coalesce(b.ends[x.position - 1], 0))";

/** Rows per page of a scan. */
const PAGE_ROWS = 256;
/** A page stops once its bodies reach this many bytes (it always holds at least one row). */
const PAGE_BYTES = 16 * 1024 * 1024;

/** The shard's rows in seq order, a page per query; with `bodies` false, only keys and positions. */
export async function* pagesOf(pool: pg.Pool, t: Tables, shard: number, bodies: boolean): AsyncGenerator<BatchRow[]> {
  const text = bodies
    ? `SELECT seq, streams, ends, dead, body FROM (
         SELECT seq, streams, ends, dead, body, sum(octet_length(body)) OVER (ORDER BY seq) - octet_length(body) AS before
           FROM ${t.batches} WHERE shard = $1 AND seq > $2 ORDER BY seq LIMIT ${PAGE_ROWS}) AS page
        WHERE before < ${PAGE_BYTES} ORDER BY seq`
    : `SELECT seq, streams, ends, dead FROM ${t.batches} WHERE shard = $1 AND seq > $2 ORDER BY seq LIMIT ${PAGE_ROWS}`;
  const name = `fusee_${bodies ? "scan" : "keys"}_${t.schema}`;
  let after = "0";
  for (;;) {
    const page = await pool.query<BatchRow>({ name, text, values: [shard, after] });
    if (page.rows.length === 0) return;
    yield page.rows;
    after = page.rows[page.rows.length - 1]!.seq;
  }
}

/** The entries of a row that are not dead, in order, their bodies views of the row's body. */
export function liveEntries(row: BatchRow): LogEntry[] {
  const body = row.body!;
  const dead = row.dead.length === 0 ? undefined : new Set(row.dead);
  const out: LogEntry[] = [];
  let start = 0;
  for (let i = 0; i < row.streams.length; i++) {
    const end = row.ends[i]!;
    if (dead?.has(i + 1) !== true) out.push({ stream: row.streams[i]!, body: body.subarray(start, end) });
    start = end;
  }
  return out;
}

/**
 * The bodies at the given rows and 1-based positions, in the order given. A drop that commits
 * after the positions were looked up removes all of them or none, since the query reads one
 * snapshot: deleted rows are not found and entries marked dead are skipped.
 */
export async function readAt(
  pool: pg.Pool,
  t: Tables,
  shard: number,
  rows: readonly number[],
  positions: readonly number[],
): Promise<Buffer[]> {
  if (rows.length === 0) return [];
  const found = await pool.query<{ body: Buffer }>({
    name: `fusee_read_${t.schema}`,
    text: `
      SELECT ${ENTRY_BODY} AS body
        FROM unnest($2::bigint[], $3::integer[]) WITH ORDINALITY AS x(row_seq, position, i)
        JOIN ${t.batches} AS b ON b.shard = $1 AND b.seq = x.row_seq
       WHERE x.position <> ALL (b.dead)
       ORDER BY x.i`,
    values: [shard, rows, positions],
  });
  return found.rows.map((r) => r.body);
}

/**
 * The bodies of one stream's live entries, looked for in every row of the shard: for readers that
 * do not hold the shard and so have no index of it.
 */
export async function readByScan(pool: pg.Pool, t: Tables, shard: number, stream: string): Promise<Buffer[]> {
  const found = await pool.query<{ body: Buffer }>({
    name: `fusee_read_scan_${t.schema}`,
    text: `
      SELECT ${ENTRY_BODY} AS body
        FROM ${t.batches} AS b, unnest(b.streams) WITH ORDINALITY AS x(stream, position)
       WHERE b.shard = $1 AND $2 = ANY (b.streams) AND x.stream = $2 AND x.position <> ALL (b.dead)
       ORDER BY b.seq, x.position`,
    values: [shard, stream],
  });
  return found.rows.map((r) => r.body);
}

/** A row's body and ends with its dead entries' bytes removed; dead entries keep their positions, empty. */
export function withoutDead(row: BatchRow): { body: Buffer; ends: number[] } {
  const body = row.body!;
  const dead = new Set(row.dead);
  const parts: Buffer[] = [];
  const ends: number[] = [];
  let start = 0;
  let total = 0;
  for (let i = 0; i < row.ends.length; i++) {
    const end = row.ends[i]!;
    if (!dead.has(i + 1)) {
      parts.push(body.subarray(start, end));
      total += end - start;
    }
    ends.push(total);
    start = end;
  }
  return { body: Buffer.concat(parts, total), ends };
}
