import { randomBytes } from "node:crypto";
import os from "node:os";
import type pg from "pg";
import { ConfigError, FuseeError, ShardMovedError, StorageError } from "../../core/errors.js";
import type { AppendWaiter, CommitObserver, Log, LogEntry, LogStats } from "../log.js";
import { type Driver, loadDriver } from "./driver.js";
import type { ShardWriter } from "./group-insert.js";
import { type LeaseRow, LeaseTable } from "./leases.js";
import { LogNotifications, type NotifyListener } from "./log-notifications.js";
import { migrate } from "./migrations.js";
import { encodeWake } from "./notify.js";
import { PermitTable } from "./permit-table.js";
import { RequestTable } from "./request-table.js";
import { DEFAULT_SCHEMA, type Tables, tablesOf } from "./schema.js";
import { liveEntries, pagesOf, readAt, readByScan } from "./batch-rows.js";
import { compactRows } from "./row-compaction.js";
import { type AcquiredListener, type HeldShard, type LostListener, ShardLeases } from "./shard-leases.js";

export type { AcquiredListener, LostListener } from "./shard-leases.js";
export { type NotifyListener, OWNER_WAKE_SHARD } from "./log-notifications.js";

/** Options of {@link openPostgresLog}. */
export interface PostgresLogOptions {
  /** A PostgreSQL connection string, e.g. `postgres://user@127.0.0.1:5432/app`. */
  readonly url: string;
  /** The schema holding the log's tables, created and migrated on open; default `"fusee"`. */
  readonly schema?: string;
  /** Number of shards: required to create a schema, checked against it after that. */
  readonly shards?: number;
  /** This process's name in the lease table; unique per process (default: host, pid and a random tag). */
  readonly owner?: string;
  /** How long a lease lasts without renewal, on the database clock; default 10 000 ms. */
  readonly leaseMs?: number;
  /**
   * `"fair"` (default): take free shards up to an even share of the live owners and release extras
   * when others join. `"all"`: one process runs everything; open waits for every shard (for
   * leases of a process that died to expire, up to `claimTimeoutMs`) and never gives one up.
   */
  readonly claim?: "fair" | "all";
  /** How long a `claim: "all"` open waits for shards held by others; default `leaseMs` + 2 s. */
  readonly claimTimeoutMs?: number;
  /** Renew leases, rebalance and poll in the background; default true (tests drive them by hand). */
  readonly background?: boolean;
  /** Interval of the polling wake-up sent to `onNotify` subscribers; default 5 000 ms. */
  readonly pollMs?: number;
  /** Connections in the pool; default one per shard (up to 16) plus two. */
  readonly poolSize?: number;
}

const DEFAULT_LEASE_MS = 10_000;
const MIN_LEASE_MS = 100;
const DEFAULT_POLL_MS = 5_000;

/**
 * Opens (creating and migrating if needed) a {@link PostgresLog} on a schema of a PostgreSQL
 * database, and takes shard leases as `claim` says before it resolves.
 *
 * @example
 * const log = await openPostgresLog({ url: "postgres://postgres@127.0.0.1/app", shards: 4, claim: "all" });
 * await log.append(1, { stream: "run-42", body: new TextEncoder().encode("started") });
 * await log.close();
 */
export async function openPostgresLog(options: PostgresLogOptions): Promise<PostgresLog> {
  const tables = tablesOf(options.schema ?? DEFAULT_SCHEMA);
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const claim = options.claim ?? "fair";
  if (typeof options.url !== "string" || options.url.trim() === "") throw new ConfigError("a PostgreSQL log needs a connection URL (option url)");
  if (options.shards !== undefined && (!Number.isInteger(options.shards) || options.shards < 1 || options.shards > 65_536)) {
    throw new ConfigError(`shards must be a whole number from 1 to 65536, got ${options.shards}`);
  }
  if (!Number.isFinite(leaseMs) || leaseMs < MIN_LEASE_MS) throw new ConfigError(`leaseMs must be at least ${MIN_LEASE_MS}, got ${leaseMs}`);
  if (claim !== "fair" && claim !== "all") throw new ConfigError(`claim must be "fair" or "all", got "${String(claim)}"`);
  const owner = options.owner ?? `${os.hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  if (typeof owner !== "string" || owner === "" || owner.length > 200) throw new ConfigError(`owner must be a name of 1 to 200 characters, got "${String(owner)}"`);

  const where = `${redact(options.url)} (schema "${tables.schema}")`;
  // Every connection of the process carries its owner name, so an operator (or a test) can tell
  // its sessions apart in pg_stat_activity.
  const connection: pg.ClientConfig = {
    connectionString: options.url,
    application_name: `fusee ${owner}`.slice(0, 63),
    keepAlive: true,
  };
  const driver = await loadDriver();
  const pool = new driver.Pool({ ...connection, max: options.poolSize ?? Math.min(options.shards ?? 4, 16) + 2, idleTimeoutMillis: 60_000 });
  // An idle connection that breaks is dropped by the pool; the error needs a listener, and the next
  // statement on that shard reports any failure that matters.
  pool.on("error", () => undefined);
  try {
    await migrate(pool, tables);
    const shards = await settleShardCount(pool, tables, options.shards);
    const leases = new LeaseTable(pool, tables, owner, leaseMs);
    await leases.init(shards);
    const log = new PostgresLog({
      driver,
      pool,
      tables,
      leases,
      shards,
      claim,
      where,
      connection,
      pollMs: options.pollMs ?? DEFAULT_POLL_MS,
    });
    await log.start(options.claimTimeoutMs ?? leaseMs + 2_000, options.background ?? true);
    return log;
  } catch (err) {
    await pool.end().catch(() => undefined);
    if (err instanceof FuseeError) throw err;
    throw new StorageError(`could not open the PostgreSQL log at ${where}: ${(err as Error).message}`, { cause: err });
  }
}

/** Records the shard count on first open; refuses another count after that. */
async function settleShardCount(pool: pg.Pool, t: Tables, wanted: number | undefined): Promise<number> {
  if (wanted !== undefined) {
    await pool.query(`INSERT INTO ${t.settings} (key, value) VALUES ('shards', $1) ON CONFLICT (key) DO NOTHING`, [String(wanted)]);
  }
  const found = await pool.query<{ value: string }>(`SELECT value FROM ${t.settings} WHERE key = 'shards'`);
  const stored = found.rows[0] === undefined ? undefined : Number(found.rows[0].value);
  if (stored === undefined) {
    throw new ConfigError(`creating the PostgreSQL log in schema "${t.schema}" needs a shard count (option shards)`);
  }
  if (wanted !== undefined && wanted !== stored) {
    throw new ConfigError(
      `the PostgreSQL schema "${t.schema}" was created with ${stored} shards (table ${t.settings}) but is being opened ` +
        `with ${wanted}; the shard count is fixed for the life of the data, so open it with shards: ${stored}`,
    );
  }
  return stored;
}

interface PostgresLogParts {
  readonly driver: Driver;
  readonly pool: pg.Pool;
  readonly tables: Tables;
  readonly leases: LeaseTable;
  readonly shards: number;
  readonly claim: "fair" | "all";
  readonly where: string;
  readonly connection: pg.ClientConfig;
  readonly pollMs: number;
}

/** The tables through which the processes of a cluster reach each other, on connections of their own. */
export interface ClusterTables {
  readonly requests: RequestTable;
  readonly permits: PermitTable;
}

/**
 * A {@link Log} on PostgreSQL that several processes share: each appends only to the shards it
 * holds a lease on, and every insert checks that lease in the same statement. Reading (`scan`,
 * `read`) works for any shard; `streams`, `stats` and writing need the lease. Obtain one with
 * {@link openPostgresLog}.
 *
 * A lost connection stops only what it was carrying: a batch insert in flight on it fails (whether
 * it committed is unknown, so it is never retried) and stops its shard for this process, which
 * gives the lease back and takes the shard again after a back-off (or another process does), at a
 * new epoch, from what the database holds. Other statements use new connections from the pool.
 */
export class PostgresLog implements Log {
  readonly shardCount: number;
  readonly readOnly = false;
  private readonly shards: ShardLeases;
  private readonly wakes: LogNotifications;
  private closed = false;
  private closing: Promise<void> | undefined;

  /** @internal Use {@link openPostgresLog}. */
  constructor(private readonly p: PostgresLogParts) {
    this.shardCount = p.shards;
    this.shards = new ShardLeases({
      pool: p.pool,
      tables: p.tables,
      leases: p.leases,
      shards: p.shards,
      claim: p.claim,
      where: p.where,
      leaseMs: p.leases.leaseMs,
    });
    this.wakes = new LogNotifications({
      driver: p.driver,
      connection: p.connection,
      channel: p.tables.channel,
      owner: p.leases.owner,
      pollMs: p.pollMs,
      owned: () => this.shards.ownedShards(),
      holds: (shard) => this.shards.live(shard) !== undefined,
    });
  }

  /** This process's name in the lease table. */
  get owner(): string {
    return this.p.leases.owner;
  }

  /** How long a lease of this process lasts without renewal. */
  get leaseMs(): number {
    return this.p.leases.leaseMs;
  }

  /** The schema the log lives in. */
  get schema(): string {
    return this.p.tables.schema;
  }

  /**
   * The shards this process holds a working lease on, in order: its writer is healthy and the lease
   * has not run out on this process's monotonic clock.
   */
  ownedShards(): number[] {
    return this.shards.ownedShards();
  }

  /** The epoch of this process's lease on `shard`, or undefined when it holds none (or it ran out). */
  epochOf(shard: number): number | undefined {
    return this.shards.live(shard)?.writer.epoch;
  }

  /** Calls `listener` whenever this process starts holding a shard; returns the unsubscribe function. */
  onAcquired(listener: AcquiredListener): () => void {
    return this.shards.onAcquired(listener);
  }

  /** Calls `listener` whenever this process stops holding a shard; returns the unsubscribe function. */
  onLost(listener: LostListener): () => void {
    return this.shards.onLost(listener);
  }

  /** Tells `observer` of each batch inserted from now on: its entries, bytes and the statement's time. */
  observeCommits(observer: CommitObserver): void {
    this.shards.commitObserver = observer;
  }

  /** Calls `listener` when a lease renewal runs a third of the lease late; returns the unsubscribe function. */
  onLeaseLate(listener: (lateMs: number, leaseMs: number) => void): () => void {
    return this.shards.onLate(listener);
  }

  /**
   * Calls `listener` for wake-ups of shards this process holds: each `notify` from any process,
   * and a poll (payload undefined) every `pollMs` and after the listening connection came back.
   * Resolves, with the unsubscribe function, once this process is listening.
   *
   * @example
   * const stop = await log.onNotify((shard, payload) => void drainInbox(shard));
   */
  onNotify(listener: NotifyListener): Promise<() => void> {
    this.assertOpen();
    return this.wakes.onShard(listener);
  }

  /**
   * Calls `listener` when another process wakes this one by its owner name (a wake of shard
   * {@link OWNER_WAKE_SHARD} whose payload is the name). Resolves, with the unsubscribe function,
   * once this process is listening.
   */
  onOwnerWake(listener: () => void): Promise<() => void> {
    this.assertOpen();
    return this.wakes.onOwner(listener);
  }

  /** Wakes the holder of `shard` (whichever process it is) with `payload`; delivered after this resolves. */
  async notify(shard: number, payload: string): Promise<void> {
    this.assertOpen();
    this.checkShard(shard);
    await this.p.pool.query("SELECT pg_notify($1, $2)", [this.p.tables.channel, encodeWake(shard, payload)]);
  }

  /** Extends the leases this process holds; a lease found lost stops its shard. */
  renew(): Promise<void> {
    return this.shards.renew();
  }

  /**
   * Renews, then takes or releases shards: up to an even share of the live owners for
   * `claim: "fair"`, every shard for `claim: "all"`.
   */
  rebalance(): Promise<void> {
    return this.shards.rebalance();
  }

  /**
   * Gives the lease of `shard` up at once, because this process cannot work on it (its runs could
   * not be loaded): another process takes it, or this one after a back-off.
   */
  abandon(shard: number, cause: unknown): void {
    this.shards.abandon(shard, cause);
  }

  /** The lease rows of every shard, as the table holds them. */
  leases(): Promise<LeaseRow[]> {
    return this.p.leases.rows();
  }

  /** The request and permit tables of a cluster on this log's schema, each with connections of its own. */
  clusterTables(): ClusterTables {
    this.assertOpen();
    return {
      requests: new RequestTable(this.p.driver, this.p.connection, this.p.tables),
      permits: new PermitTable(this.p.driver, this.p.connection, this.p.tables, this.owner, this.leaseMs),
    };
  }

  append(shard: number, entry: LogEntry): Promise<void> {
    const w = this.writer(shard);
    return w instanceof StorageError ? Promise.reject(w) : w.append(entry);
  }

  appendThen(shard: number, stream: string, body: Uint8Array, waiter: AppendWaiter): void {
    const w = this.writer(shard);
    if (w instanceof StorageError) queueMicrotask(() => waiter.failed(w));
    else w.appendThen(stream, body, waiter);
  }

  appendAll(shard: number, entries: readonly LogEntry[]): Promise<void> {
    const w = this.writer(shard);
    return w instanceof StorageError ? Promise.reject(w) : w.appendAll(entries);
  }

  async *scan(shard: number): AsyncIterable<LogEntry> {
    for await (const batch of this.scanBatches(shard)) yield* batch;
  }

  async *scanBatches(shard: number): AsyncIterable<readonly LogEntry[]> {
    this.assertOpen();
    this.checkShard(shard);
    for await (const rows of pagesOf(this.p.pool, this.p.tables, shard, true)) {
      for (const row of rows) {
        const entries = liveEntries(row);
        if (entries.length > 0) yield entries;
      }
    }
  }

  /**
   * A held shard's entries are found through its index; any other shard's by reading all its
   * rows, since only the holder keeps an index.
   */
  async read(shard: number, stream: string): Promise<LogEntry[]> {
    this.assertOpen();
    this.checkShard(shard);
    const h = this.shards.live(shard);
    let bodies: Buffer[];
    if (h !== undefined) {
      const at = h.index.locate(stream);
      bodies = await readAt(this.p.pool, this.p.tables, shard, at.rows, at.positions);
    } else bodies = await readByScan(this.p.pool, this.p.tables, shard, stream);
    return bodies.map((body) => ({ stream, body }));
  }

  streams(shard: number): string[] {
    const h = this.holding(shard);
    if (h instanceof StorageError) throw h;
    return h.index.keys();
  }

  drop(shard: number, streams: readonly string[]): Promise<void> {
    const w = this.writer(shard);
    return w instanceof StorageError ? Promise.reject(w) : w.drop(streams);
  }

  /**
   * A drop deletes the rows it leaves with no live entry in the statement that records it; this
   * rewrites rows where dropped entries hold at least half the bytes, and reports the bytes both
   * freed since the last `compact`. PostgreSQL's autovacuum makes the space reusable.
   */
  async compact(shard: number): Promise<number> {
    const h = this.holding(shard);
    if (h instanceof StorageError) throw h;
    await h.writer.idle();
    await compactRows({ pool: this.p.pool, tables: this.p.tables, owner: this.owner, shard, epoch: h.writer.epoch, index: h.index });
    return h.index.takeFreed();
  }

  stats(): LogStats {
    const live = Array.from({ length: this.shardCount }, (_, shard) => this.shards.live(shard));
    return {
      appended: [...this.shards.appended],
      syncs: [...this.shards.syncs],
      liveEntries: live.map((h) => h?.index.liveEntries ?? 0),
      bytes: live.map((h) => h?.index.bytes ?? 0),
    };
  }

  /** Waits for pending appends, releases every lease and closes the connections. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      await this.shards.close();
      await this.wakes.close();
      await this.p.pool.end().catch(() => undefined);
    })();
    return this.closing;
  }

  /** @internal Takes the first leases (see `claim`) and starts the background work. */
  async start(claimTimeoutMs: number, background: boolean): Promise<void> {
    try {
      await this.shards.start(claimTimeoutMs, background);
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  private writer(shard: number): ShardWriter | StorageError {
    const h = this.holding(shard, true);
    return h instanceof StorageError ? h : h.writer;
  }

  /** The shard's lease state, or why it cannot be used (`ShardMovedError` when another process may hold it). A stopped writer answers for itself when `stopped` is set. */
  private holding(shard: number, stopped = false): HeldShard | StorageError {
    if (!Number.isInteger(shard) || shard < 0 || shard >= this.shardCount) {
      return new StorageError(`shard ${shard} does not exist (the PostgreSQL log at ${this.p.where} has ${this.shardCount} shards)`);
    }
    if (this.closed) return new StorageError(`the PostgreSQL log at ${this.p.where} is closed`);
    const h = this.shards.live(shard);
    if (h !== undefined) return h;
    // A writer that stopped refuses with its own reason; one whose lease just ran out is being stopped.
    const last = this.shards.last(shard);
    if (stopped && last !== undefined && !last.writer.healthy) return last;
    return new ShardMovedError(
      `shard ${shard} is not held by owner "${this.owner}" (table ${this.p.tables.leases}); it holds ${this.ownedShards().join(", ") || "no shard"}`,
    );
  }

  private checkShard(shard: number): void {
    if (!Number.isInteger(shard) || shard < 0 || shard >= this.shardCount) {
      throw new StorageError(`shard ${shard} does not exist (the PostgreSQL log at ${this.p.where} has ${this.shardCount} shards)`);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageError(`the PostgreSQL log at ${this.p.where} is closed`);
  }
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return "the configured PostgreSQL URL";
  }
}
