import { randomBytes } from "node:crypto";
import os from "node:os";
import pg from "pg";
import { ConfigError, FuseeError, ShardMovedError, StorageError } from "../../core/errors.js";
import type { AppendWaiter, Log, LogEntry, LogStats } from "../log.js";
import { candidateOrder, fairShare } from "./fair-share.js";
import { ShardWriter, type StopReason } from "./group-insert.js";
import { type LeaseGrant, type LeaseRow, LeaseTable, describeLease } from "./leases.js";
import { migrate } from "./migrations.js";
import { WakeListener, encodeWake } from "./notify.js";
import { DEFAULT_SCHEMA, type Tables, tablesOf } from "./schema.js";
import { liveEntries, pagesOf, readAt, readByScan } from "./batch-rows.js";
import { compactRows } from "./row-compaction.js";
import { ShardIndex } from "./shard-index.js";

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

/** Called when this process starts holding a shard's lease, once its state is loaded. */
export type AcquiredListener = (shard: number, epoch: number) => void;
/** Called when this process stops holding a shard: released, taken, expired or failed. */
export type LostListener = (shard: number, reason: StopReason, error: StorageError | undefined) => void;
/** Called for a wake-up of an owned shard; `payload` is undefined for a poll (look for missed work). */
export type NotifyListener = (shard: number, payload: string | undefined) => void;

/** The shard number of wake-ups addressed to a process by its owner name rather than to a shard. */
export const OWNER_WAKE_SHARD = -1;

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
  const connection: pg.ClientConfig = {
    connectionString: options.url,
    application_name: `fusee ${owner}`.slice(0, 63),
    keepAlive: true,
  };
  const pool = new pg.Pool({ ...connection, max: options.poolSize ?? Math.min(options.shards ?? 4, 16) + 2, idleTimeoutMillis: 60_000 });
  // An idle connection that breaks is dropped by the pool; the error needs a listener, and the next
  // statement on that shard reports any failure that matters.
  pool.on("error", () => undefined);
  try {
    await migrate(pool, tables);
    const shards = await settleShardCount(pool, tables, options.shards);
    const leases = new LeaseTable(pool, tables, owner, leaseMs);
    await leases.init(shards);
    const log = new PostgresLog({
      pool,
      tables,
      leases,
      shards,
      claim,
      where,
      connection,
      leaseMs,
      pollMs: options.pollMs ?? DEFAULT_POLL_MS,
      background: options.background ?? true,
    });
    await log.start(options.claimTimeoutMs ?? leaseMs + 2_000);
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
  readonly pool: pg.Pool;
  readonly tables: Tables;
  readonly leases: LeaseTable;
  readonly shards: number;
  readonly claim: "fair" | "all";
  readonly where: string;
  readonly connection: pg.ClientConfig;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly background: boolean;
}

interface Held {
  readonly writer: ShardWriter;
  readonly index: ShardIndex;
}

/**
 * A {@link Log} on PostgreSQL that several processes share: each appends only to the shards it
 * holds a lease on, and every insert checks that lease in the same statement. Reading (`scan`,
 * `read`) works for any shard; `streams`, `stats` and writing need the lease. Obtain one with
 * {@link openPostgresLog}.
 */
export class PostgresLog implements Log {
  readonly shardCount: number;
  readonly readOnly = false;
  private readonly held: (Held | undefined)[];
  /**
   * Shards that stopped for this log on a failure or a lost lease. With `claim: "all"` they are
   * never taken again, since the single process using the log cannot tell a shard that came back;
   * with `claim: "fair"` a later rebalance may take one anew (a new epoch, announced by `onAcquired`).
   */
  private readonly stopped = new Set<number>();
  private readonly appended: number[];
  private readonly syncs: number[];
  private readonly acquiredListeners = new Set<AcquiredListener>();
  private readonly lostListeners = new Set<LostListener>();
  private readonly lateListeners = new Set<(lateMs: number, leaseMs: number) => void>();
  private readonly notifyListeners = new Set<NotifyListener>();
  private readonly ownerWakeListeners = new Set<() => void>();
  private listener: WakeListener | undefined;
  private listening: Promise<void> | undefined;
  private tickTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private closed = false;
  private closing: Promise<void> | undefined;

  /** @internal Use {@link openPostgresLog}. */
  constructor(private readonly p: PostgresLogParts) {
    this.shardCount = p.shards;
    this.held = new Array<Held | undefined>(p.shards).fill(undefined);
    this.appended = new Array<number>(p.shards).fill(0);
    this.syncs = new Array<number>(p.shards).fill(0);
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

  /** The shards this process holds a working lease on, in order. */
  ownedShards(): number[] {
    const out: number[] = [];
    this.held.forEach((h, shard) => {
      if (h?.writer.healthy) out.push(shard);
    });
    return out;
  }

  /** The epoch of this process's lease on `shard`, or undefined when it holds none. */
  epochOf(shard: number): number | undefined {
    const h = this.held[shard];
    return h?.writer.healthy ? h.writer.epoch : undefined;
  }

  /** Calls `listener` whenever this process starts holding a shard; returns the unsubscribe function. */
  onAcquired(listener: AcquiredListener): () => void {
    this.acquiredListeners.add(listener);
    return () => this.acquiredListeners.delete(listener);
  }

  /** Calls `listener` whenever this process stops holding a shard; returns the unsubscribe function. */
  onLost(listener: LostListener): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /** Calls `listener` when a lease renewal runs a third of the lease late; returns the unsubscribe function. */
  onLeaseLate(listener: (lateMs: number, leaseMs: number) => void): () => void {
    this.lateListeners.add(listener);
    return () => this.lateListeners.delete(listener);
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
    return this.subscribe(this.notifyListeners, listener);
  }

  /**
   * Calls `listener` when another process wakes this one by its owner name (a wake of shard
   * {@link OWNER_WAKE_SHARD} whose payload is the name). Resolves, with the unsubscribe function,
   * once this process is listening.
   */
  onOwnerWake(listener: () => void): Promise<() => void> {
    return this.subscribe(this.ownerWakeListeners, listener);
  }

  /** Adds a listener of wake-ups once this process listens on the schema's channel. */
  private async subscribe<L>(listeners: Set<L>, listener: L): Promise<() => void> {
    this.assertOpen();
    listeners.add(listener);
    this.listening ??= this.listen();
    try {
      await this.listening;
    } catch (err) {
      listeners.delete(listener);
      this.listening = undefined;
      throw err;
    }
    return () => listeners.delete(listener);
  }

  /** Wakes the holder of `shard` (whichever process it is) with `payload`; delivered after this resolves. */
  async notify(shard: number, payload: string): Promise<void> {
    this.assertOpen();
    this.checkShard(shard);
    await this.p.pool.query("SELECT pg_notify($1, $2)", [this.p.tables.channel, encodeWake(shard, payload)]);
  }

  /** Extends the leases this process holds; a lease found lost stops its shard. */
  renew(): Promise<void> {
    return this.serialize(() => this.renewHeld());
  }

  /**
   * Renews, then takes or releases shards: up to an even share of the live owners for
   * `claim: "fair"`, every shard for `claim: "all"`.
   */
  rebalance(): Promise<void> {
    return this.serialize(async () => {
      await this.renewHeld();
      await this.balance();
    });
  }

  /** The lease rows of every shard, as the table holds them. */
  leases(): Promise<LeaseRow[]> {
    return this.p.leases.rows();
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
    const h = this.held[shard];
    let bodies: Buffer[];
    if (h?.writer.healthy) {
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
    return {
      appended: [...this.appended],
      syncs: [...this.syncs],
      liveEntries: this.held.map((h) => (h?.writer.healthy ? h.index.liveEntries : 0)),
      bytes: this.held.map((h) => (h?.writer.healthy ? h.index.bytes : 0)),
    };
  }

  /** Waits for pending appends, releases every lease and closes the connections. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      clearTimeout(this.tickTimer);
      clearInterval(this.pollTimer);
      await this.ticking;
      const held = this.held.flatMap((h) => (h === undefined ? [] : [h]));
      await Promise.allSettled(held.map((h) => h.writer.idle()));
      const grants = held.filter((h) => h.writer.healthy).map((h) => ({ shard: h.writer.shard, epoch: h.writer.epoch }));
      for (const h of held) h.writer.halt(new StorageError(`the PostgreSQL log at ${this.p.where} is closed`));
      await this.p.leases.release(grants).catch(() => undefined);
      await this.p.leases.leave().catch(() => undefined);
      await this.listener?.close();
      await this.p.pool.end().catch(() => undefined);
    })();
    return this.closing;
  }

  /** @internal Takes the first leases (see `claim`) and starts the background work. */
  async start(claimTimeoutMs: number): Promise<void> {
    try {
      if (this.p.claim === "all") await this.claimAll(claimTimeoutMs);
      else await this.rebalance();
    } catch (err) {
      await this.close();
      throw err;
    }
    if (this.p.background) this.scheduleTick();
  }

  private async claimAll(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.rebalance();
      if (this.ownedShards().length === this.shardCount) return;
      if (Date.now() >= deadline) {
        const missing = this.held.flatMap((h, shard) => (h?.writer.healthy ? [] : [shard]));
        const rows = await this.p.leases.rows(missing);
        const held = rows.map((r) => `shard ${r.shard}: ${describeLease(r, this.p.tables.leases)}`).join("; ");
        throw new StorageError(
          `owner "${this.owner}" could not take every shard of ${this.p.where} within ${timeoutMs} ms, so another ` +
            `process is using it (${held}). Stop that process, or give each engine its own schema`,
        );
      }
      await sleep(Math.min(250, this.p.leaseMs / 4));
    }
  }

  private scheduleTick(): void {
    if (this.closed) return;
    const interval = this.p.leaseMs / 3;
    const due = performance.now() + interval;
    this.tickTimer = setTimeout(() => {
      this.warnIfLate(performance.now() - due);
      this.rebalance()
        .catch(() => undefined)
        .finally(() => this.scheduleTick());
    }, interval);
    this.tickTimer.unref();
  }

  /**
   * Leases are renewed on the event loop: a renewal a third of the lease late means the loop was
   * blocked that long, and a little more would have cost this process its shards.
   */
  private warnIfLate(lateMs: number): void {
    if (lateMs < this.p.leaseMs / 3) return;
    emit(this.lateListeners, (l) => l(lateMs, this.p.leaseMs));
    process.emitWarning(
      `owner "${this.owner}" renewed its shard leases ${Math.round(lateMs)} ms late: the event loop was blocked that long, ` +
        `and a block longer than ${Math.round((this.p.leaseMs * 2) / 3)} ms loses the leases (leaseMs ${this.p.leaseMs}). ` +
        "Keep long synchronous work off the engine's process or raise leaseMs.",
      { type: "FuseeLeaseWarning", code: "FUSEE_LEASE_RENEWAL_LATE" },
    );
  }

  /** Runs lease work one piece at a time, so a renewal never races a takeover of this process. */
  private serialize(work: () => Promise<void>): Promise<void> {
    const run = this.ticking.then(() => (this.closed ? undefined : work()));
    this.ticking = run.catch(() => undefined);
    return run;
  }

  private async renewHeld(): Promise<void> {
    const held = this.held.flatMap((h) => (h?.writer.healthy ? [h] : []));
    const renewed = await this.p.leases.renew(held.map((h) => ({ shard: h.writer.shard, epoch: h.writer.epoch })));
    const gone = held.filter((h) => !renewed.has(h.writer.shard) && h.writer.healthy);
    if (gone.length === 0) return;
    const rows = await this.p.leases.rows(gone.map((h) => h.writer.shard)).catch(() => []);
    for (const h of gone) {
      const row = rows.find((r) => r.shard === h.writer.shard);
      const reason: StopReason = row !== undefined && row.owner === this.owner && row.epoch === h.writer.epoch ? "expired" : "taken";
      const error = new ShardMovedError(
        `shard ${h.writer.shard}: owner "${this.owner}" lost its lease at epoch ${h.writer.epoch} ` +
          `(${describeLease(row, this.p.tables.leases)}); nothing appended to this shard by this process will be stored`,
      );
      h.writer.halt(error);
      this.shardStopped(h.writer, error, reason);
    }
  }

  private async balance(): Promise<void> {
    if (this.closed) return;
    const owned = this.ownedShards();
    if (this.p.claim === "all") {
      const skip = new Set<number>([...owned, ...this.stopped]);
      await this.take(await this.p.leases.acquire(candidateOrder(this.shardCount, [], this.owner, skip), this.shardCount));
      return;
    }
    const owners = await this.p.leases.liveOwners();
    const target = fairShare(this.shardCount, owners, this.owner);
    if (owned.length < target) {
      const order = candidateOrder(this.shardCount, owners, this.owner, new Set(owned));
      await this.take(await this.p.leases.acquire(order, target - owned.length));
    } else if (owned.length > target) {
      for (const shard of owned.slice(target)) await this.release(shard);
    }
  }

  /** Loads each granted shard's streams and starts its writer; a shard that fails to load is given back. */
  private async take(grants: readonly LeaseGrant[]): Promise<void> {
    const loaded = await Promise.all(
      grants.map(async (grant) => {
        try {
          const state = await this.load(grant.shard);
          if (!this.closed) return { grant, ...state };
        } catch {
          // Given back below; another process, or a later rebalance, takes it.
        }
        await this.p.leases.release([grant]).catch(() => undefined);
        return undefined;
      }),
    );
    for (const item of loaded) {
      if (item === undefined) continue;
      const { grant, index, lastSeq } = item;
      const writer: ShardWriter = new ShardWriter({
        pool: this.p.pool,
        tables: this.p.tables,
        owner: this.owner,
        shard: grant.shard,
        epoch: grant.epoch,
        lastSeq,
        index,
        committed: (entries) => {
          this.appended[grant.shard]! += entries;
          this.syncs[grant.shard]! += 1;
        },
        stopped: (error, reason) => this.shardStopped(writer, error, reason),
      });
      this.held[grant.shard] = { writer, index };
      this.stopped.delete(grant.shard);
      emit(this.acquiredListeners, (l) => l(grant.shard, grant.epoch));
    }
  }


  /** Indexes the shard's rows, and finds the last seq used. */
  private async load(shard: number): Promise<{ index: ShardIndex; lastSeq: number }> {
    const index = new ShardIndex();
    let lastSeq = 0;
    for await (const rows of pagesOf(this.p.pool, this.p.tables, shard, false)) {
      for (const row of rows) {
        const seq = Number(row.seq);
        index.addRow(seq, row.streams.length, row.streams, row.ends, row.dead.length === 0 ? undefined : new Set(row.dead));
        lastSeq = Math.max(lastSeq, seq + row.streams.length - 1);
      }
    }
    return { index, lastSeq };
  }

  /** Hands a shard back for rebalancing once what was appended to it has committed. */
  private async release(shard: number): Promise<void> {
    const h = this.held[shard];
    if (h === undefined || !h.writer.healthy) return;
    const error = new ShardMovedError(
      `shard ${shard} was released by owner "${this.owner}" (epoch ${h.writer.epoch}) so that another process can take it; ` +
        "append to a shard this process holds (see ownedShards)",
    );
    await h.writer.seal(error);
    if (h.writer.failure !== undefined) return;
    h.writer.halt(error);
    await this.p.leases.release([{ shard, epoch: h.writer.epoch }]).catch(() => undefined);
    emit(this.lostListeners, (l) => l(shard, "released", undefined));
  }

  private shardStopped(writer: ShardWriter, error: StorageError, reason: StopReason): void {
    if (this.held[writer.shard]?.writer !== writer) return;
    this.stopped.add(writer.shard);
    if (reason !== "taken") void this.p.leases.release([{ shard: writer.shard, epoch: writer.epoch }]).catch(() => undefined);
    if (this.closed) return;
    emit(this.lostListeners, (l) => l(writer.shard, reason, error));
  }

  private async listen(): Promise<void> {
    const listener = new WakeListener(this.p.connection, this.p.tables.channel, {
      message: (shard, payload) => {
        if (shard === OWNER_WAKE_SHARD) {
          if (payload === this.owner) emit(this.ownerWakeListeners, (l) => l());
        } else if (this.held[shard]?.writer.healthy) emit(this.notifyListeners, (l) => l(shard, payload));
      },
      reconnected: () => this.poll(),
    });
    await listener.start();
    if (this.closed) {
      await listener.close();
      return;
    }
    this.listener = listener;
    this.pollTimer = setInterval(() => this.poll(), this.p.pollMs);
    this.pollTimer.unref();
  }

  private poll(): void {
    for (const shard of this.ownedShards()) emit(this.notifyListeners, (l) => l(shard, undefined));
  }

  private writer(shard: number): ShardWriter | StorageError {
    const h = this.holding(shard, true);
    return h instanceof StorageError ? h : h.writer;
  }

  /** The shard's lease state, or why it cannot be used (`ShardMovedError` when another process may hold it). A stopped writer answers for itself when `stopped` is set. */
  private holding(shard: number, stopped = false): Held | StorageError {
    if (!Number.isInteger(shard) || shard < 0 || shard >= this.shardCount) {
      return new StorageError(`shard ${shard} does not exist (the PostgreSQL log at ${this.p.where} has ${this.shardCount} shards)`);
    }
    if (this.closed) return new StorageError(`the PostgreSQL log at ${this.p.where} is closed`);
    const h = this.held[shard];
    if (h !== undefined && (h.writer.healthy || stopped)) return h;
    return new ShardMovedError(`shard ${shard} is not held by owner "${this.owner}" (table ${this.p.tables.leases}); it holds ${this.ownedShards().join(", ") || "no shard"}`);
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

/**
 * Calls every listener. Listeners run inside database callbacks, where a throw would become an
 * unhandled rejection, so one that throws is reported as a process warning and the rest still run.
 */
function emit<L>(listeners: ReadonlySet<L>, call: (listener: L) => void): void {
  for (const l of listeners) {
    try {
      call(l);
    } catch (err) {
      process.emitWarning(`a PostgreSQL log listener threw: ${(err as Error)?.stack ?? String(err)}`, "FuseeListenerWarning");
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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
