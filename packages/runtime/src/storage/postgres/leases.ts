/*
 * Shard leases on the database clock. A lease row per shard names its owner, an expiry and an
 * epoch that grows with every takeover; appends check owner, epoch and expiry in the statement
 * that inserts (see group-insert.ts), so the epoch fences out a process that lost its lease.
 * Takeover and release lock the row, so they wait for an insert that holds it `FOR SHARE` (or a
 * drop that updates it), and a write that waited for a takeover sees the new epoch and stores nothing.
 */
import type pg from "pg";
import type { Tables } from "./schema.js";

/**
 * What it is for a lease to hold, as an SQL condition on a lease row (columns of `row`, a table
 * alias, or unqualified when empty): it is `shard`'s, names `owner` at `epoch`, and has not expired
 * on the database clock. Each argument is an SQL expression: a parameter or a column.
 */
export function leaseHolds(shard: string, owner: string, epoch: string, row = ""): string {
  const c = row === "" ? "" : `${row}.`;
  return `${c}shard = ${shard} AND ${c}owner = ${owner} AND ${c}epoch = ${epoch} AND ${c}expires_at > clock_timestamp()`;
}

/**
 * The fence of every write to a held shard, as a CTE named `lease`: one row while the lease row of
 * shard $1 names owner $2 at epoch $3 and has not expired, locked `FOR SHARE` so no takeover can
 * commit before the write does. A statement joins it, and writes nothing when it is empty.
 */
export function leaseFence(t: Tables): string {
  return `
      lease AS (
        SELECT 1 FROM ${t.leases}
         WHERE ${leaseHolds("$1", "$2", "$3")}
           FOR SHARE)`;
}

/**
 * The fence of a write that drops, as a CTE named `lease`: {@link leaseFence}'s row, locked by an
 * update that raises the lease row's `last_seq` to the parameter `lastSeq` names. A drop can
 * delete the rows that held a shard's last seqs, so their number is kept where the next holder
 * reads it when it takes the lease (see {@link LeaseTable.acquire}).
 */
export function dropFence(t: Tables, lastSeq: string): string {
  return `
      lease AS (
        UPDATE ${t.leases} SET last_seq = greatest(last_seq, ${lastSeq}::bigint)
         WHERE ${leaseHolds("$1", "$2", "$3")}
        RETURNING 1)`;
}

/** A lease this process holds: the shard and the epoch it was granted at. */
export interface LeaseGrant {
  readonly shard: number;
  readonly epoch: number;
}

/** A lease just taken, with the highest seq a drop of an earlier holder recorded for the shard. */
export interface TakenLease extends LeaseGrant {
  readonly lastSeq: number;
}

/** A lease row as the table holds it. */
export interface LeaseRow {
  readonly shard: number;
  readonly owner: string | null;
  readonly epoch: number;
  readonly expiresAt: Date;
  /** Whether the lease is still running on the database clock. */
  readonly live: boolean;
}

/** The lease and owner statements of one process (`owner`) on one schema. */
export class LeaseTable {
  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
    readonly owner: string,
    readonly leaseMs: number,
  ) {}

  /** Makes sure every shard has its lease row. */
  async init(shards: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.t.leases} (shard) SELECT generate_series(0, $1::integer - 1) ON CONFLICT (shard) DO NOTHING`,
      [shards],
    );
  }

  /**
   * Marks this process live for another lease period and extends the given leases, as long as
   * this process still holds each at its epoch; returns the shards extended.
   */
  async renew(held: readonly LeaseGrant[]): Promise<Set<number>> {
    // A renewal stuck on a connection that died without a word is given up after two leases, so the
    // next one can go out on another connection; the leases have run out by then anyway.
    const config: pg.QueryConfig & { query_timeout: number } = {
      query_timeout: this.leaseMs * 2,
      name: `fusee_renew_${this.t.schema}`,
      text: `
        WITH beat AS (
          INSERT INTO ${this.t.owners} AS o (owner, expires_at)
          VALUES ($1, clock_timestamp() + $2::float8 * interval '1 millisecond')
          ON CONFLICT (owner) DO UPDATE SET expires_at = EXCLUDED.expires_at
        )
        UPDATE ${this.t.leases} AS l
           SET expires_at = clock_timestamp() + $2::float8 * interval '1 millisecond'
          FROM unnest($3::integer[], $4::bigint[]) AS h(shard, epoch)
         WHERE l.shard = h.shard AND l.epoch = h.epoch AND l.owner = $1
        RETURNING l.shard`,
      values: [this.owner, this.leaseMs, held.map((g) => g.shard), held.map((g) => g.epoch)],
    };
    const result = await this.pool.query<{ shard: number }>(config);
    return new Set(result.rows.map((r) => r.shard));
  }

  /**
   * Takes up to `limit` of the candidate shards whose lease is free, expired, or already this
   * owner's (left by an earlier process of the same owner name), preferring them in the order
   * given. Each taken lease gets the next epoch. Rows another transaction has locked are skipped.
   * The `last_seq` read here is final: the new epoch fences out every later write of the last holder.
   */
  async acquire(candidates: readonly number[], limit: number): Promise<TakenLease[]> {
    if (candidates.length === 0 || limit <= 0) return [];
    const result = await this.pool.query<{ shard: number; epoch: string; last_seq: string }>({
      name: `fusee_acquire_${this.t.schema}`,
      text: `
        UPDATE ${this.t.leases} AS l
           SET owner = $1, epoch = l.epoch + 1, acquired_at = clock_timestamp(),
               expires_at = clock_timestamp() + $2::float8 * interval '1 millisecond'
         WHERE l.shard IN (
           SELECT c.shard FROM ${this.t.leases} AS c
            WHERE c.shard = ANY ($3::integer[])
              AND (c.owner IS NULL OR c.owner = $1 OR c.expires_at <= clock_timestamp())
            ORDER BY array_position($3::integer[], c.shard)
            LIMIT $4
              FOR UPDATE SKIP LOCKED)
        RETURNING l.shard, l.epoch, l.last_seq`,
      values: [this.owner, this.leaseMs, candidates, limit],
    });
    return result.rows
      .map((r) => ({ shard: r.shard, epoch: Number(r.epoch), lastSeq: Number(r.last_seq) }))
      .sort((a, b) => a.shard - b.shard);
  }

  /** Gives leases back (free at once for others), where this process still holds them. */
  async release(grants: readonly LeaseGrant[]): Promise<void> {
    if (grants.length === 0) return;
    await this.pool.query(
      `UPDATE ${this.t.leases} AS l SET owner = NULL, expires_at = clock_timestamp()
         FROM unnest($2::integer[], $3::bigint[]) AS h(shard, epoch)
        WHERE l.shard = h.shard AND l.epoch = h.epoch AND l.owner = $1`,
      [this.owner, grants.map((g) => g.shard), grants.map((g) => g.epoch)],
    );
  }

  /** Owners whose heartbeat has not expired, sorted; owners gone for an hour are deleted. */
  async liveOwners(): Promise<string[]> {
    const result = await this.pool.query<{ owner: string }>({
      name: `fusee_owners_${this.t.schema}`,
      text: `
        WITH gone AS (DELETE FROM ${this.t.owners} WHERE expires_at < clock_timestamp() - interval '1 hour')
        SELECT owner FROM ${this.t.owners} WHERE expires_at > clock_timestamp() ORDER BY owner COLLATE "C"`,
    });
    return result.rows.map((r) => r.owner);
  }

  /** The lease rows of the given shards (all shards when omitted). */
  async rows(shards?: readonly number[]): Promise<LeaseRow[]> {
    const result = await this.pool.query<{ shard: number; owner: string | null; epoch: string; expires_at: Date; live: boolean }>(
      `SELECT shard, owner, epoch, expires_at, expires_at > clock_timestamp() AS live FROM ${this.t.leases}
        WHERE $1::integer[] IS NULL OR shard = ANY ($1::integer[]) ORDER BY shard`,
      [shards === undefined ? null : [...shards]],
    );
    return result.rows.map((r) => ({
      shard: r.shard,
      owner: r.owner,
      epoch: Number(r.epoch),
      expiresAt: r.expires_at,
      live: r.live,
    }));
  }

  /** Removes this process from the live owners (on close). */
  async leave(): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.t.owners} WHERE owner = $1`, [this.owner]);
  }
}

/** How a lease row reads in an error message. */
export function describeLease(row: LeaseRow | undefined, table: string): string {
  if (row === undefined) return `no row in ${table}`;
  if (row.owner === null) return `${table} shows it free at epoch ${row.epoch}`;
  return (
    `${table} shows owner "${row.owner}" at epoch ${row.epoch}, ` + `${row.live ? "expiring" : "expired"} at ${row.expiresAt.toISOString()}`
  );
}
