/*
 * The permits of limits, shared by the processes of a cluster through PostgreSQL (migration 3). A
 * permit is a row with an expiry that its holder renews while the attempt runs, so the permits of
 * a process that died come back after one lease time; a release deletes the row.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import type { Tables } from "../../storage/postgres/schema.js";
import type { Release, SharedPermits } from "../limits.js";

export class ClusterPermits implements SharedPermits {
  private readonly pool: pg.Pool;
  /** Tokens of the permits this process holds. */
  private readonly held = new Set<string>();
  private readonly renewal: NodeJS.Timeout;
  private closed = false;

  constructor(
    url: string,
    private readonly t: Tables,
    private readonly holder: string,
    private readonly leaseMs: number,
  ) {
    this.pool = new pg.Pool({ connectionString: url, max: 2, idleTimeoutMillis: 30_000, application_name: "fusee permits" });
    this.pool.on("error", () => undefined);
    this.renewal = setInterval(() => void this.renew().catch(() => undefined), Math.max(50, Math.floor(leaseMs / 3)));
    this.renewal.unref();
  }

  async take(name: string, concurrent: number, perSecond: number): Promise<Release | { retryInMs: number }> {
    const token = randomUUID();
    const intervalMs = perSecond > 0 ? 1000 / perSecond : 0;
    const result = await this.pool.query<{ wait: number }>(`SELECT ${this.t.takePermit}($1, $2, $3, $4, $5, $6) AS wait`, [
      name,
      token,
      this.holder,
      Math.ceil(this.leaseMs),
      Number.isFinite(concurrent) ? concurrent : 0,
      intervalMs,
    ]);
    const wait = result.rows[0]?.wait ?? -1;
    if (wait !== 0) return { retryInMs: wait };
    this.held.add(token);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held.delete(token);
      // A release that fails to reach the database is made good by the permit's expiry.
      void this.pool.query(`DELETE FROM ${this.t.permits} WHERE token = $1`, [token]).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewal);
    if (this.held.size > 0) await this.pool.query(`DELETE FROM ${this.t.permits} WHERE token = ANY($1::uuid[])`, [[...this.held]]).catch(() => undefined);
    this.held.clear();
    await this.pool.end().catch(() => undefined);
  }

  private async renew(): Promise<void> {
    if (this.closed || this.held.size === 0) return;
    await this.pool.query(
      `UPDATE ${this.t.permits} SET expires_at = clock_timestamp() + $2 * interval '1 millisecond' WHERE token = ANY($1::uuid[])`,
      [[...this.held], this.leaseMs],
    );
  }
}
