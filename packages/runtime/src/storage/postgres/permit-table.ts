/*
 * The permits of limits shared by the processes of a cluster (migration 3). A permit is a row with
 * an expiry that its holder renews while its attempt runs, so the permits of a process that died
 * come back after one lease time; a release deletes the row. A permit that expired stays expired:
 * renewal extends only live ones, since others may already hold the place it had.
 */
import type pg from "pg";
import type { Driver } from "./driver.js";
import type { Tables } from "./schema.js";

export class PermitTable {
  private readonly pool: pg.Pool;

  constructor(
    driver: Driver,
    connection: pg.ClientConfig,
    private readonly t: Tables,
    /** The owner name of this process, recorded with its permits. */
    private readonly holder: string,
    /** How long a permit lasts without renewal, on the database clock. */
    readonly leaseMs: number,
  ) {
    this.pool = new driver.Pool({ ...connection, max: 2, idleTimeoutMillis: 30_000 });
    this.pool.on("error", () => undefined);
  }

  /**
   * Takes a permit of limit `name` under `token`: 0 when taken, -1 when `concurrent` live permits
   * are held (0: unbounded), else the milliseconds until the rate (`intervalMs` apart) allows one.
   */
  async take(name: string, token: string, concurrent: number, intervalMs: number): Promise<number> {
    const result = await this.pool.query<{ wait: number }>(`SELECT ${this.t.takePermit}($1, $2, $3, $4, $5, $6) AS wait`, [
      name,
      token,
      this.holder,
      Math.ceil(this.leaseMs),
      concurrent,
      intervalMs,
    ]);
    return result.rows[0]?.wait ?? -1;
  }

  /** Extends the permits of `tokens` that have not expired; returns those extended. */
  async renew(tokens: readonly string[]): Promise<Set<string>> {
    const result = await this.pool.query<{ token: string }>(
      `UPDATE ${this.t.permits} SET expires_at = clock_timestamp() + $2 * interval '1 millisecond'
        WHERE token = ANY($1::uuid[]) AND expires_at > clock_timestamp()
        RETURNING token::text AS token`,
      [[...tokens], this.leaseMs],
    );
    return new Set(result.rows.map((r) => r.token));
  }

  /** Deletes permits (a release); one that fails to reach the database is made good by its expiry. */
  async release(tokens: readonly string[]): Promise<void> {
    if (tokens.length === 0) return;
    await this.pool.query(`DELETE FROM ${this.t.permits} WHERE token = ANY($1::uuid[])`, [[...tokens]]);
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
