import { sql } from "./database.js";

/** Where an entry sits in a schema's batch rows: its row's first seq and its 1-based position in the row. */
export interface RowPosition {
  readonly shard: number;
  readonly seq: string;
  readonly position: number;
}

/**
 * Damages a shard as a faulty tool or a bad manual edit could: the first entry of `stream` (a run's
 * start record) is marked dead in its row, so the run's later records come before any start record
 * and recovering the shard fails. Its bytes stay in the row, for {@link reviveEntry}.
 */
export async function hideFirstEntry(schema: string, shard: number, stream: string): Promise<RowPosition> {
  const rows = await sql<{ seq: string; position: number }>(
    `WITH first AS (
       SELECT b.seq, x.position::integer AS position
         FROM "${schema}".batches AS b, unnest(b.streams) WITH ORDINALITY AS x(stream, position)
        WHERE b.shard = $1 AND x.stream = $2 AND x.position <> ALL (b.dead)
        ORDER BY b.seq, x.position LIMIT 1)
     UPDATE "${schema}".batches AS b SET dead = b.dead || first.position
       FROM first WHERE b.shard = $1 AND b.seq = first.seq
     RETURNING b.seq::text AS seq, first.position`,
    [shard, stream],
  );
  if (rows.length !== 1) throw new Error(`no live entry of ${stream} in shard ${shard} of ${schema}`);
  return { shard, seq: rows[0]!.seq, position: rows[0]!.position };
}

/** Repairs what {@link hideFirstEntry} did: the entry is live again. */
export async function reviveEntry(schema: string, at: RowPosition): Promise<void> {
  const rows = await sql(
    `UPDATE "${schema}".batches SET dead = array_remove(dead, $3) WHERE shard = $1 AND seq = $2::bigint AND $3 = ANY (dead) RETURNING seq`,
    [at.shard, at.seq, at.position],
  );
  if (rows.length !== 1) throw new Error(`entry ${at.position} of row ${at.seq} of shard ${at.shard} was not dead`);
}

/** A shard's lease row: its owner (null when free), epoch, and whether it is running on the database clock. */
export async function leaseOf(schema: string, shard: number): Promise<{ owner: string | null; epoch: number; live: boolean }> {
  const [row] = await sql<{ owner: string | null; epoch: string; live: boolean }>(
    `SELECT owner, epoch::text AS epoch, expires_at > clock_timestamp() AS live FROM "${schema}".leases WHERE shard = $1`,
    [shard],
  );
  return { owner: row!.owner, epoch: Number(row!.epoch), live: row!.live };
}
