/*
 * Runs one lease schedule: two or three PostgreSQL logs (writers) in this process on one fresh
 * schema, driven by hand (no background renewal), so a lease runs out exactly when the schedule
 * stops renewing it. A stall holds the shard's lease row locked in a session of the harness while
 * the holder's batch waits on it, as a statement delayed in the network or the database would, and
 * lets it go past the lease or not. Every append's outcome is recorded; the stored rows and an
 * audit of every insert (a trigger, in the inserting transaction) are read afterwards for the
 * checks (lease-checks.ts).
 */
import pg from "pg";
import { ShardMovedError } from "../../../src/core/errors.js";
import { openPostgresLog, type PostgresLog } from "../../../src/storage/postgres/pg-log.js";
import { PG_URL, freshSchema, sql, storedEntries, type StoredEntry } from "../support/database.js";
import { sleep } from "../../support/wait.js";
import type { LeaseAction, LeaseSchedule } from "./lease-schedule.js";

/** One append and how it ended. */
export interface AppendRecord {
  /** The entry's body, unique in the schedule: `owner#n`. */
  readonly body: string;
  readonly owner: string;
  readonly shard: number;
  /** The writer's epoch on the shard when it appended (undefined when it held no lease on it). */
  readonly epoch: number | undefined;
  /** acked: stored; moved: refused with ShardMovedError, which says nothing was stored; doubt: another error. */
  outcome: "pending" | "acked" | "moved" | "doubt";
  error?: string;
}

/** One insert as the audit trigger saw it: who wrote the row, and what the lease row said then. */
export interface AuditRow {
  readonly shard: number;
  readonly seq: number;
  readonly writer: string;
  readonly leaseOwner: string | null;
}

export interface LeaseRun {
  readonly schedule: LeaseSchedule;
  readonly appends: readonly AppendRecord[];
  readonly stored: readonly StoredEntry[];
  readonly audit: readonly AuditRow[];
  /** Appends whose statement reached the database and found the lease gone ("was not stored"). */
  readonly refusedInFlight: number;
  /** Shards taken at an epoch above their first. */
  readonly takeovers: number;
  readonly trace: readonly string[];
  /** The harness itself failed (an append that never settled, a statement of its own that failed). */
  readonly harnessError?: string;
}

/** How long the harness waits for every append to settle at the end. */
const SETTLE_MS = 10_000;

async function prepare(schema: string, shards: number): Promise<void> {
  const log = await openPostgresLog({ url: PG_URL, schema, shards, owner: "prepare", leaseMs: 1_000, background: false });
  await log.close();
  await sql(`
    CREATE TABLE "${schema}".sim_audit (
      n bigserial PRIMARY KEY, shard integer NOT NULL, seq bigint NOT NULL, writer text NOT NULL, lease_owner text);
    CREATE FUNCTION "${schema}".sim_audit_batch() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO "${schema}".sim_audit (shard, seq, writer, lease_owner)
        SELECT NEW.shard, NEW.seq, current_setting('application_name'), l.owner FROM "${schema}".leases AS l WHERE l.shard = NEW.shard;
      RETURN NEW;
    END $$;
    CREATE TRIGGER sim_audit AFTER INSERT ON "${schema}".batches FOR EACH ROW EXECUTE FUNCTION "${schema}".sim_audit_batch();
  `);
}

class Harness {
  readonly logs: PostgresLog[] = [];
  private readonly generations: number[] = [];
  readonly appends: AppendRecord[] = [];
  readonly settling: Promise<void>[] = [];
  readonly trace: string[] = [];
  private readonly counters = new Map<string, number>();
  private readonly began = performance.now();

  constructor(
    readonly schema: string,
    readonly s: LeaseSchedule,
  ) {}

  note(line: string): void {
    this.trace.push(`${Math.round(performance.now() - this.began)} ms ${line}`);
  }

  async open(slot: number): Promise<void> {
    const generation = (this.generations[slot] ?? -1) + 1;
    this.generations[slot] = generation;
    const owner = `w${slot}.${generation}`;
    const log = await openPostgresLog({ url: PG_URL, schema: this.schema, owner, leaseMs: this.s.leaseMs, background: false });
    log.onAcquired((shard, epoch) => this.note(`${owner} took shard ${shard} at epoch ${epoch}`));
    log.onLost((shard, reason) => this.note(`${owner} lost shard ${shard} (${reason})`));
    this.logs[slot] = log;
    this.note(`${owner} opened holding [${log.ownedShards().join(", ")}]`);
  }

  append(slot: number, shard: number, entries: number): void {
    const log = this.logs[slot]!;
    for (let i = 0; i < entries; i++) {
      const n = (this.counters.get(log.owner) ?? 0) + 1;
      this.counters.set(log.owner, n);
      const record: AppendRecord = { body: `${log.owner}#${n}`, owner: log.owner, shard, epoch: log.epochOf(shard), outcome: "pending" };
      this.appends.push(record);
      this.settling.push(
        log.append(shard, { stream: `s${shard}`, body: Buffer.from(record.body) }).then(
          () => void (record.outcome = "acked"),
          (e: unknown) => {
            record.outcome = e instanceof ShardMovedError ? "moved" : "doubt";
            record.error = (e as Error).message;
          },
        ),
      );
    }
  }

  async act(action: LeaseAction): Promise<void> {
    switch (action.kind) {
      case "append":
        this.append(action.writer, action.shard, action.entries);
        return;
      case "renew":
        await this.logs[action.writer]!.renew().catch((e: unknown) => this.note(`renew failed: ${(e as Error).message}`));
        return;
      case "rebalance":
        await this.logs[action.writer]!.rebalance().catch((e: unknown) => this.note(`rebalance failed: ${(e as Error).message}`));
        return;
      case "wait":
        await sleep(action.ms);
        return;
      case "restart":
        await this.logs[action.writer]!.close();
        await this.open(action.writer);
        return;
      case "stall":
        await this.stall(action.shard, action.entries, action.ms);
        return;
    }
  }

  /**
   * Locks the lease row, and writes it unchanged so a statement that waited for the lock reads the
   * row again (its expiry included) once the lock is let go; the holder's appends wait meanwhile.
   */
  private async stall(shard: number, entries: number, ms: number): Promise<void> {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query("BEGIN");
      const rows = await client.query<{ owner: string | null }>(`SELECT owner FROM "${this.schema}".leases WHERE shard = $1 FOR UPDATE`, [
        shard,
      ]);
      await client.query(`UPDATE "${this.schema}".leases SET expires_at = expires_at WHERE shard = $1`, [shard]);
      const owner = rows.rows[0]?.owner;
      const slot = this.logs.findIndex((l) => l.owner === owner);
      this.note(`stall of shard ${shard} for ${ms} ms; its lease row names ${owner ?? "nobody"}`);
      if (slot >= 0) this.append(slot, shard, entries);
      await sleep(ms);
      await client.query("COMMIT");
    } finally {
      await client.end();
    }
  }
}

/** Runs `s` on a schema of its own (dropped afterwards) and gathers what the checks read. */
export async function runLeaseSchedule(s: LeaseSchedule): Promise<LeaseRun> {
  const schema = freshSchema();
  const h = new Harness(schema, s);
  let harnessError: string | undefined;
  // Lost leases are the point of the schedule: their process warnings are counted in the trace, not printed.
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    if (type === "FuseeLeaseWarning") return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    await prepare(schema, s.shards);
    for (let slot = 0; slot < s.writers; slot++) await h.open(slot);
    for (const step of s.steps) {
      await sleep(step.gapMs);
      h.note(JSON.stringify(step.action));
      await h.act(step.action);
    }
    const settled = await Promise.race([Promise.allSettled(h.settling).then(() => true), sleep(SETTLE_MS).then(() => false)]);
    if (!settled) harnessError = `appends still unsettled ${SETTLE_MS} ms after the schedule ended`;
  } catch (e) {
    harnessError = (e as Error).stack ?? String(e);
  } finally {
    process.emitWarning = emitWarning;
  }
  await Promise.allSettled(h.logs.map((l) => l.close()));
  try {
    const stored = await storedEntries(schema);
    const audit = (
      await sql<{ shard: number; seq: string; writer: string; lease_owner: string | null }>(
        `SELECT shard, seq, writer, lease_owner FROM "${schema}".sim_audit ORDER BY n`,
      )
    ).map((r) => ({ shard: r.shard, seq: Number(r.seq), writer: r.writer, leaseOwner: r.lease_owner }));
    const epochs = await sql<{ shard: number; epoch: string }>(`SELECT shard, epoch FROM "${schema}".leases`);
    return {
      schedule: s,
      appends: h.appends,
      stored,
      audit,
      refusedInFlight: h.appends.filter((a) => a.outcome === "moved" && a.error?.includes("was not stored") === true).length,
      // The prepare step took each shard once; each writer's first lease of it is one more epoch.
      takeovers: epochs.reduce((n, r) => n + Math.max(0, Number(r.epoch) - 2), 0),
      trace: h.trace,
      ...(harnessError === undefined ? {} : { harnessError }),
    };
  } finally {
    await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}
