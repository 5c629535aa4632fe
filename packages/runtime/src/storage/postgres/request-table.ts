/*
 * The request and reply tables of a cluster (migrations 2, 4 and 8). A process asking the owner of a
 * shard to perform an operation inserts a request and NOTIFYs the shard in one statement; the owner
 * performs it, then deletes the request, inserts the reply and NOTIFYs the asking process by its
 * owner name in one statement; the asking process takes the reply. A request stays until it is
 * answered, so the next owner of a shard answers what the previous one did not. A request asked on
 * behalf of a shard the asking process holds carries a fence (its shard and epoch), so an owner that
 * reads it after that lease moved or ran out can refuse it instead of performing it late.
 */
import type pg from "pg";
import type { Driver } from "./driver.js";
import { leaseHolds } from "./leases.js";
import { OWNER_WAKE_SHARD } from "./log-notifications.js";
import { encodeWake } from "./notify.js";
import type { Tables } from "./schema.js";

/**
 * The lease a request is asked under: its owner performs it only while the asking process holds
 * `shard` at `epoch` (a schedule's start, asked by the holder of the schedule's shard).
 */
export interface RequestFence {
  readonly shard: number;
  readonly epoch: number;
}

/** A request to store for the owner of `shard`. */
export interface NewRequest {
  readonly id: string;
  readonly shard: number;
  readonly kind: string;
  readonly payload: Buffer;
  readonly fence?: RequestFence;
}

/** The reply to a request, for the process that asked. */
export interface Answer {
  readonly id: string;
  readonly reply: Reply;
  readonly asker: string | null;
}

/** A request waiting for the owner of its shard. */
export interface PendingRequest {
  readonly id: string;
  readonly kind: string;
  readonly payload: Buffer;
  /** The owner name of the process that asked, to wake with the reply. */
  readonly asker: string | null;
  /**
   * The request's fence, if it has one, and whether it held when the request was read: the lease
   * row of its shard named the asker at its epoch and had not expired, on the database clock.
   */
  readonly fence?: RequestFence & { readonly holds: boolean };
}

/** A reply: `ok` with the value's bytes, or `error` with the error's. */
export interface Reply {
  readonly outcome: "ok" | "error";
  readonly payload: Buffer;
}

/** A pending request as its row is read, with whether its fence held. */
interface PendingRow {
  readonly id: string;
  readonly kind: string;
  readonly payload: Buffer;
  readonly asker: string | null;
  readonly fence_shard: number | null;
  /** A bigint, which the driver reads as text. */
  readonly fence_epoch: string | null;
  readonly fence_holds: boolean;
}

/** The payload of the wake-up a request sends to its shard's owner. */
export const REQUEST_WAKE = "request";

export class RequestTable {
  private readonly pool: pg.Pool;

  constructor(
    driver: Driver,
    connection: pg.ClientConfig,
    private readonly t: Tables,
  ) {
    this.pool = new driver.Pool({ ...connection, max: 8, idleTimeoutMillis: 30_000 });
    this.pool.on("error", () => undefined);
  }

  /** Stores requests for the owners of their shards and wakes those owners once they are committed, in one statement. */
  async ask(requests: readonly NewRequest[], asker: string): Promise<void> {
    const shards = [...new Set(requests.map((r) => r.shard))];
    await this.pool.query(
      `WITH r AS (
         INSERT INTO ${this.t.requests} (id, shard, kind, payload, asker, fence_shard, fence_epoch)
         SELECT id, shard, kind, payload, $5, fence_shard, fence_epoch
           FROM unnest($1::uuid[], $2::integer[], $3::text[], $4::bytea[], $8::integer[], $9::bigint[])
             AS u(id, shard, kind, payload, fence_shard, fence_epoch)
       )
       SELECT pg_notify($6, w) FROM unnest($7::text[]) AS w`,
      [
        requests.map((r) => r.id),
        requests.map((r) => r.shard),
        requests.map((r) => r.kind),
        requests.map((r) => r.payload),
        asker,
        this.t.channel,
        shards.map((shard) => encodeWake(shard, REQUEST_WAKE)),
        requests.map((r) => r.fence?.shard ?? null),
        requests.map((r) => r.fence?.epoch ?? null),
      ],
    );
  }

  /**
   * The requests waiting for the owner of `shard`, oldest first, less those in `skip` (being
   * performed already). Only IDs are read for all of them: requests that wait long (a forwarded
   * wait for a run's result) would otherwise be read in full at every wake-up. A fence is checked
   * against the lease row in the statement that reads its request, on the database clock.
   */
  async pending(shard: number, skip: ReadonlySet<string>): Promise<PendingRequest[]> {
    const ids = await this.pool.query<{ id: string }>(
      `SELECT id::text AS id FROM ${this.t.requests} WHERE shard = $1 ORDER BY created_at`,
      [shard],
    );
    const fresh = ids.rows.map((r) => r.id).filter((id) => !skip.has(id));
    if (fresh.length === 0) return [];
    const result = await this.pool.query<PendingRow>(
      `SELECT r.id::text AS id, r.kind, r.payload, r.asker, r.fence_shard, r.fence_epoch,
              EXISTS (SELECT 1 FROM ${this.t.leases} AS l
                       WHERE ${leaseHolds("r.fence_shard", "r.asker", "r.fence_epoch", "l")}) AS fence_holds
         FROM ${this.t.requests} AS r WHERE r.id = ANY($1::uuid[]) ORDER BY r.created_at`,
      [fresh],
    );
    return result.rows.map(({ id, kind, payload, asker, fence_shard, fence_epoch, fence_holds }) => ({
      id,
      kind,
      payload,
      asker,
      ...(fence_shard === null || fence_epoch === null
        ? {}
        : { fence: { shard: fence_shard, epoch: Number(fence_epoch), holds: fence_holds } }),
    }));
  }

  /** Answers requests: deletes them, stores their replies and wakes the asking processes, in one statement. */
  async answer(answers: readonly Answer[]): Promise<void> {
    const askers = [...new Set(answers.flatMap((a) => (a.asker === null ? [] : [a.asker])))];
    await this.pool.query(
      `WITH d AS (DELETE FROM ${this.t.requests} WHERE id = ANY($1::uuid[])),
            r AS (
              INSERT INTO ${this.t.replies} (id, outcome, payload)
              SELECT * FROM unnest($1::uuid[], $2::text[], $3::bytea[]) ON CONFLICT (id) DO NOTHING
            )
       SELECT pg_notify($4, w) FROM unnest($5::text[]) AS w`,
      [
        answers.map((a) => a.id),
        answers.map((a) => a.reply.outcome),
        answers.map((a) => a.reply.payload),
        this.t.channel,
        askers.map((asker) => encodeWake(OWNER_WAKE_SHARD, asker)),
      ],
    );
  }

  /**
   * Deletes a request no owner has answered (its asker gave up waiting); false when it was answered
   * or taken meanwhile.
   */
  async withdraw(id: string): Promise<boolean> {
    const result = await this.pool.query(`DELETE FROM ${this.t.requests} WHERE id = $1::uuid`, [id]);
    return result.rowCount === 1;
  }

  /** Whether a request was stored: it waits for its owner, or its reply waits to be taken. */
  async stored(id: string): Promise<boolean> {
    const result = await this.pool.query<{ stored: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${this.t.requests} WHERE id = $1::uuid) OR EXISTS (SELECT 1 FROM ${this.t.replies} WHERE id = $1::uuid) AS stored`,
      [id],
    );
    return result.rows[0]?.stored === true;
  }

  /** Takes the replies there are to some requests (deleting them), by request ID. */
  async take(ids: readonly string[]): Promise<Map<string, Reply>> {
    const result = await this.pool.query<Reply & { id: string }>(
      `DELETE FROM ${this.t.replies} WHERE id = ANY($1::uuid[]) RETURNING id::text AS id, outcome, payload`,
      [ids],
    );
    return new Map(result.rows.map((r) => [r.id, { outcome: r.outcome, payload: r.payload }]));
  }

  /** Deletes replies older than an hour: their askers stopped before taking them. */
  async sweepReplies(): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.t.replies} WHERE created_at < clock_timestamp() - interval '1 hour'`);
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
