/*
 * Compaction of a held shard's batch rows. A drop deletes a row once none of its entries is live,
 * but a row with live entries keeps the bodies of its dead ones; a row whose dead entries hold at
 * least half its bytes is rewritten without them. Dead entries keep their positions, with no
 * bytes, so every live entry keeps its seq.
 *
 * A rewrite is fenced like an insert, and applies only if the row's dead list is still the one it
 * was computed from, so a drop that commits in between wins and the row waits for the next run.
 */
import type pg from "pg";
import { type BatchRow, withoutDead } from "./batch-rows.js";
import { leaseFence } from "./leases.js";
import type { Tables } from "./schema.js";
import type { ShardIndex } from "./shard-index.js";

export interface CompactionOptions {
  readonly pool: pg.Pool;
  readonly tables: Tables;
  readonly owner: string;
  readonly shard: number;
  readonly epoch: number;
  readonly index: ShardIndex;
}

/** Rows whose keys and ends are read per query; bodies are read one row at a time. */
const CHUNK = 256;

/** Rewrites the shard's mostly dead rows; the index counts the bytes freed. */
export async function compactRows(o: CompactionOptions): Promise<void> {
  const t = o.tables;
  const candidates = o.index.partlyDead().map((r) => r.seq);
  for (let i = 0; i < candidates.length; i += CHUNK) {
    const found = await o.pool.query<BatchRow>(
      `SELECT seq, streams, ends, dead FROM ${t.batches} WHERE shard = $1 AND seq = ANY ($2::bigint[]) ORDER BY seq`,
      [o.shard, candidates.slice(i, i + CHUNK)],
    );
    for (const row of found.rows) {
      const total = row.ends.at(-1) ?? 0;
      if (total === 0 || deadBytes(row) * 2 < total) continue;
      const [stored] = (
        await o.pool.query<{ body: Buffer }>(`SELECT body FROM ${t.batches} WHERE shard = $1 AND seq = $2 AND dead = $3::integer[]`, [
          o.shard,
          row.seq,
          row.dead,
        ])
      ).rows;
      // Gone or changed since: a drop committed meanwhile, and the next compaction looks again.
      if (stored === undefined) continue;
      const rewritten = withoutDead({ ...row, body: stored.body });
      const updated = await o.pool.query(
        `WITH ${leaseFence(t)}
         UPDATE ${t.batches} AS b SET body = $6, ends = $7
           FROM lease
          WHERE b.shard = $1 AND b.seq = $4 AND b.dead = $5::integer[]`,
        [o.shard, o.owner, o.epoch, row.seq, row.dead, rewritten.body, rewritten.ends],
      );
      if (updated.rowCount === 1) o.index.rewritten(Number(row.seq), rewritten.ends.at(-1) ?? 0);
    }
  }
}

/** Bytes of the row's dead entries. */
function deadBytes(row: BatchRow): number {
  let n = 0;
  for (const p of row.dead) n += row.ends[p - 1]! - (p === 1 ? 0 : row.ends[p - 2]!);
  return n;
}
