import pg from "pg";
import { percentile, round } from "./percentile.js";
import { STEPS } from "./step-workflows.js";

/** Connections of the floor's concurrent run, a common pool size for a service on one database. */
export const FLOOR_POOL = 32;
const WARMUP = 200;
const SAMPLES = 2_000;

/**
 * DBOS-style step durability: one `INSERT ... COMMIT` of a row per step into a table shaped like
 * DBOS's `operation_outputs`, keyed by workflow and step.
 */
export class Floor {
  private readonly table: string;
  private rounds = 0;

  constructor(
    private readonly url: string,
    private readonly schema: string,
  ) {
    this.table = `"${schema}".floor_outputs`;
  }

  async create(): Promise<void> {
    await this.withPool(1, async (pool) => {
      await pool.query(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
      await pool.query(
        `CREATE TABLE ${this.table} (workflow_id text NOT NULL, step integer NOT NULL, output text, PRIMARY KEY (workflow_id, step))`,
      );
    });
  }

  /** Sequential inserts on one connection: p50 and p99 in µs. */
  async latency(): Promise<{ p50_us: number; p99_us: number }> {
    const samples = new Float64Array(SAMPLES);
    await this.withPool(1, async (pool) => {
      const client = await pool.connect();
      try {
        for (let i = 0; i < WARMUP; i++) await client.query(this.insert("warm", i));
        for (let i = 0; i < SAMPLES; i++) {
          const t0 = performance.now();
          await client.query(this.insert("seq", i));
          samples[i] = (performance.now() - t0) * 1000;
        }
      } finally {
        client.release();
      }
    });
    return { p50_us: round(percentile(samples, SAMPLES, 0.5)), p99_us: round(percentile(samples, SAMPLES, 0.99)) };
  }

  /** Steps per second of `workflows` concurrent workflows of {@link STEPS} sequential inserts each, through a pool. */
  async throughput(workflows: number): Promise<number> {
    const round = ++this.rounds;
    return this.withPool(FLOOR_POOL, async (pool) => {
      // Every round starts on an empty table, so the floor does not slow down as rounds add rows.
      await pool.query(`TRUNCATE ${this.table}`);
      await Promise.all(Array.from({ length: FLOOR_POOL }, () => pool.query("SELECT 1")));
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: workflows }, async (_, w) => {
          for (let s = 0; s < STEPS; s++) await pool.query(this.insert(`wf-${round}-${w}`, s));
        }),
      );
      return Math.round((workflows * STEPS) / ((performance.now() - t0) / 1000));
    });
  }

  private insert(id: string, step: number): { name: string; text: string; values: unknown[] } {
    return {
      name: "floor_output",
      text: `INSERT INTO ${this.table} (workflow_id, step, output) VALUES ($1, $2, $3)`,
      values: [id, step, JSON.stringify(step + 1)],
    };
  }

  /** A pool open only while measuring, so its connections do not count against the engines'. */
  private async withPool<T>(max: number, body: (pool: pg.Pool) => Promise<T>): Promise<T> {
    const pool = new pg.Pool({ connectionString: this.url, max });
    try {
      return await body(pool);
    } finally {
      await pool.end();
    }
  }
}
