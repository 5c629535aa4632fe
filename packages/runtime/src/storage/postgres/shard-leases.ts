/*
 * The shard leases of one process: which shards it holds (each with its writer, its index and a
 * local deadline), their renewal, and the taking and giving back of shards.
 *
 * Two clocks bound what a process may do with a shard. The database's decides whether an insert is
 * stored (see group-insert.ts). The local one, monotonic, decides whether the process may still
 * start work on the shard: a lease granted or renewed by a statement sent at `t` lasts on the
 * database until `t + leaseMs` at the earliest, so past that on `performance.now()` the process
 * treats the shard as lost before any statement tells it so. A process that was paused (SIGSTOP, a
 * suspended VM, a blocked loop) thus starts nothing on a shard another process may already run.
 *
 * Renewal runs on a timer of its own, a third of the lease apart whether or not the last renewal
 * finished, so a renewal that hangs or a pause during one still ends in a lease warning.
 */
import type pg from "pg";
import { ShardMovedError, StorageError } from "../../core/errors.js";
import { candidateOrder, fairShare } from "./fair-share.js";
import { ShardWriter, type StopReason } from "./group-insert.js";
import { type LeaseTable, type TakenLease, describeLease } from "./leases.js";
import { pagesOf } from "./batch-rows.js";
import type { CommitObserver } from "../log.js";
import type { Tables } from "./schema.js";
import { ShardIndex } from "./shard-index.js";

/** Called when this process starts holding a shard's lease, once its state is loaded. */
export type AcquiredListener = (shard: number, epoch: number) => void;
/** Called when this process stops holding a shard: released, taken, expired or failed. */
export type LostListener = (shard: number, reason: StopReason, error: StorageError | undefined) => void;

/** A shard this process took: its writer at the lease's epoch, its index, and its local deadline. */
export interface HeldShard {
  readonly writer: ShardWriter;
  readonly index: ShardIndex;
  /** `performance.now()` past which the lease may have run out on the database. */
  deadline: number;
  /** The deadline passed and the shard is being stopped (on a microtask, not inside the caller's work). */
  expiring?: true;
}

export interface ShardLeasesParts {
  readonly pool: pg.Pool;
  readonly tables: Tables;
  readonly leases: LeaseTable;
  readonly shards: number;
  readonly claim: "fair" | "all";
  readonly where: string;
  readonly leaseMs: number;
}

/** The longest a shard that failed waits before this process takes it again. */
const MAX_COOLDOWN_MS = 30_000;

export class ShardLeases {
  private readonly held: (HeldShard | undefined)[];
  /**
   * Shards that stopped for this process. With `claim: "all"` they are never taken again, since the
   * single process using the log cannot tell a shard that came back; with `claim: "fair"` a later
   * rebalance may take one anew (a new epoch, announced by `onAcquired`).
   */
  private readonly stopped = new Set<number>();
  /** Shards whose statements failed, not taken again by this process before `until` (doubling per failure). */
  private readonly cooldown = new Map<number, { until: number; failures: number }>();
  readonly appended: number[];
  readonly syncs: number[];
  private readonly acquiredListeners = new Set<AcquiredListener>();
  private readonly lostListeners = new Set<LostListener>();
  private readonly lateListeners = new Set<(lateMs: number, leaseMs: number) => void>();
  /** Told of each batch a writer of this process committed. */
  commitObserver: CommitObserver | undefined = undefined;
  private ticking: Promise<void> = Promise.resolve();
  private tickTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private renewing = false;
  private closed = false;

  constructor(private readonly p: ShardLeasesParts) {
    this.held = new Array<HeldShard | undefined>(p.shards).fill(undefined);
    this.appended = new Array<number>(p.shards).fill(0);
    this.syncs = new Array<number>(p.shards).fill(0);
  }

  get owner(): string {
    return this.p.leases.owner;
  }

  /**
   * The shard if this process may work on it now: its writer is healthy and its local deadline has
   * not passed. A shard found past its deadline is stopped on the next microtask, since listeners of
   * its loss change the engine's state, which the caller may be in the middle of.
   */
  live(shard: number): HeldShard | undefined {
    const h = this.held[shard];
    if (h === undefined || !h.writer.healthy || h.expiring === true) return undefined;
    if (performance.now() < h.deadline) return h;
    h.expiring = true;
    queueMicrotask(() => this.expire(h));
    return undefined;
  }

  /** The shard's last writer, stopped or not (a stopped writer refuses appends with its reason). */
  last(shard: number): HeldShard | undefined {
    return this.held[shard];
  }

  /** Every shard taken since open, stopped or not. */
  all(): HeldShard[] {
    return this.held.flatMap((h) => (h === undefined ? [] : [h]));
  }

  ownedShards(): number[] {
    const out: number[] = [];
    for (let shard = 0; shard < this.held.length; shard++) if (this.live(shard) !== undefined) out.push(shard);
    return out;
  }

  onAcquired(listener: AcquiredListener): () => void {
    this.acquiredListeners.add(listener);
    return () => this.acquiredListeners.delete(listener);
  }

  onLost(listener: LostListener): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  onLate(listener: (lateMs: number, leaseMs: number) => void): () => void {
    this.lateListeners.add(listener);
    return () => this.lateListeners.delete(listener);
  }

  /** Extends the leases this process holds; a lease found lost stops its shard. */
  renew(): Promise<void> {
    return this.serialize(() => this.renewHeld());
  }

  /** Renews, then takes or releases shards as `claim` says. */
  rebalance(): Promise<void> {
    return this.serialize(async () => {
      await this.renewHeld();
      await this.balance();
    });
  }

  /** Takes the first leases (see `claim`), then renews in the background when `background` is set. */
  async start(claimTimeoutMs: number, background: boolean): Promise<void> {
    if (this.p.claim === "all") await this.claimAll(claimTimeoutMs);
    else await this.rebalance();
    if (background) this.startTicking();
  }

  /**
   * Gives a shard up at once: this process could not bring its runs back (a failed recovery), so
   * another process, or this one after a back-off, takes it at a new epoch.
   */
  abandon(shard: number, cause: unknown): void {
    const h = this.held[shard];
    if (h === undefined || !h.writer.healthy) return;
    const error = new StorageError(
      `shard ${shard}: owner "${this.owner}" gave its lease at epoch ${h.writer.epoch} up: ${(cause as Error)?.message ?? String(cause)}`,
      { cause, shard },
    );
    h.writer.halt(error);
    this.shardStopped(h.writer, error, "failed");
  }

  /** Stops renewing, lets pending appends finish and gives every lease back. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.tickTimer);
    clearTimeout(this.watchdog);
    await this.ticking;
    const held = this.all();
    await Promise.allSettled(held.map((h) => h.writer.idle()));
    const grants = held.filter((h) => h.writer.healthy).map((h) => ({ shard: h.writer.shard, epoch: h.writer.epoch }));
    for (const h of held) h.writer.halt(new StorageError(`the PostgreSQL log at ${this.p.where} is closed`));
    // Best effort: leases not given back expire after the lease time, and other processes take the shards then.
    await this.p.leases.release(grants).catch(() => undefined);
    await this.p.leases.leave().catch(() => undefined);
  }

  /** Hands a shard back for rebalancing once what was appended to it has committed. */
  async release(shard: number): Promise<void> {
    const h = this.live(shard);
    if (h === undefined) return;
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

  private async claimAll(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.rebalance();
      if (this.ownedShards().length === this.p.shards) return;
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

  /**
   * Renews every third of a lease on an interval, not after the last renewal ends: one that hangs
   * (a dead connection, a pause in the middle) is skipped over while the watchdog stops its shards.
   */
  private startTicking(): void {
    const interval = this.p.leaseMs / 3;
    let due = performance.now() + interval;
    this.tickTimer = setInterval(() => {
      const now = performance.now();
      this.warnIfLate(now - due);
      due = now + interval;
      this.checkDeadlines();
      if (this.renewing || this.closed) return;
      this.renewing = true;
      // A rebalance that fails is tried again next interval; a lease it could not renew runs out and stops its shard.
      this.rebalance()
        .catch(() => undefined)
        .finally(() => (this.renewing = false));
    }, interval);
    this.tickTimer.unref();
  }

  /**
   * Leases are renewed on the event loop: a renewal a third of the lease late means the loop was
   * blocked (or the process paused) that long, and a little more costs this process its shards.
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
    const held = this.ownedShards().map((shard) => this.held[shard] as HeldShard);
    const sentAt = performance.now();
    const renewed = await this.p.leases.renew(held.map((h) => ({ shard: h.writer.shard, epoch: h.writer.epoch })));
    for (const h of held) {
      if (renewed.has(h.writer.shard) && h.writer.healthy) h.deadline = Math.max(h.deadline, this.deadlineFrom(sentAt));
    }
    this.armWatchdog();
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

  /**
   * The local deadline of a lease granted or renewed by a statement sent at `sentAt`: the database
   * counts `leaseMs` from a later instant, and a tenth of the lease (at most a second) is kept back
   * so a step started just before the deadline has begun well before another process can take over.
   */
  private deadlineFrom(sentAt: number): number {
    return sentAt + this.p.leaseMs - Math.min(this.p.leaseMs / 10, 1_000);
  }

  /** Stops every shard past its local deadline; called by the renewal timer and the watchdog. */
  private checkDeadlines(): void {
    for (let shard = 0; shard < this.held.length; shard++) this.live(shard);
  }

  /** Wakes up at the earliest local deadline of the shards held, so a lapse is found without a call. */
  private armWatchdog(): void {
    clearTimeout(this.watchdog);
    if (this.closed) return;
    let earliest = Infinity;
    for (const h of this.held) if (h?.writer.healthy) earliest = Math.min(earliest, h.deadline);
    if (earliest === Infinity) return;
    this.watchdog = setTimeout(() => this.checkDeadlines(), Math.max(0, earliest - performance.now()) + 1);
    this.watchdog.unref();
  }

  private expire(h: HeldShard): void {
    if (!h.writer.healthy) return;
    const error = new ShardMovedError(
      `shard ${h.writer.shard}: owner "${this.owner}" let its lease at epoch ${h.writer.epoch} run out (no renewal succeeded ` +
        `within ${this.p.leaseMs} ms on this process's clock); it starts no more work on the shard and stores nothing more to it`,
    );
    h.writer.halt(error);
    this.shardStopped(h.writer, error, "expired");
  }

  private async balance(): Promise<void> {
    if (this.closed) return;
    const owned = this.ownedShards();
    const now = performance.now();
    const cooling = [...this.cooldown].flatMap(([shard, c]) => (c.until > now ? [shard] : []));
    if (this.p.claim === "all") {
      const skip = new Set<number>([...owned, ...this.stopped]);
      const sentAt = performance.now();
      await this.take(await this.p.leases.acquire(candidateOrder(this.p.shards, [], this.owner, skip), this.p.shards), sentAt);
      return;
    }
    const owners = await this.p.leases.liveOwners();
    const target = fairShare(this.p.shards, owners, this.owner);
    if (owned.length < target) {
      const order = candidateOrder(this.p.shards, owners, this.owner, new Set([...owned, ...cooling]));
      const sentAt = performance.now();
      await this.take(await this.p.leases.acquire(order, target - owned.length), sentAt);
    } else if (owned.length > target) {
      for (const shard of owned.slice(target)) await this.release(shard);
    }
  }

  /** Loads each granted shard's streams and starts its writer; a shard that fails to load is given back. */
  private async take(grants: readonly TakenLease[], sentAt: number): Promise<void> {
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
      const { grant, index } = item;
      // The rows show the last seq used unless a drop deleted them or stored none; the lease row has it then.
      const lastSeq = Math.max(item.lastSeq, grant.lastSeq);
      const writer: ShardWriter = new ShardWriter({
        pool: this.p.pool,
        tables: this.p.tables,
        owner: this.owner,
        shard: grant.shard,
        epoch: grant.epoch,
        lastSeq,
        index,
        committed: (entries, bytes, ms) => {
          this.appended[grant.shard]! += entries;
          this.syncs[grant.shard]! += 1;
          this.commitObserver?.committed(grant.shard, ms, entries, bytes);
          this.cooldown.delete(grant.shard);
        },
        stopped: (error, reason) => this.shardStopped(writer, error, reason),
      });
      this.held[grant.shard] = { writer, index, deadline: this.deadlineFrom(sentAt) };
      this.stopped.delete(grant.shard);
      emit(this.acquiredListeners, (l) => l(grant.shard, grant.epoch));
    }
    this.armWatchdog();
  }

  /** Indexes the shard's rows, and finds the last seq they hold. */
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

  /**
   * The shard stopped for this process. Called by the writer before it tells the failed batch's
   * waiters, so by the time they hear of the failure the shard is no longer this process's.
   */
  private shardStopped(writer: ShardWriter, error: StorageError, reason: StopReason): void {
    if (this.held[writer.shard]?.writer !== writer) return;
    this.stopped.add(writer.shard);
    if (reason === "failed") {
      const failures = (this.cooldown.get(writer.shard)?.failures ?? 0) + 1;
      const wait = Math.min(MAX_COOLDOWN_MS, (this.p.leaseMs / 3) * 2 ** (failures - 1));
      this.cooldown.set(writer.shard, { until: performance.now() + wait, failures });
    }
    // Given back at once (where this process still holds it), so another process need not wait for it to expire.
    if (reason !== "taken") this.p.leases.release([{ shard: writer.shard, epoch: writer.epoch }]).catch(() => undefined);
    if (this.closed) return;
    if (reason === "expired" || reason === "taken") {
      process.emitWarning(`owner "${this.owner}" lost its lease on shard ${writer.shard}: ${error.message}`, {
        type: "FuseeLeaseWarning",
        code: "FUSEE_LEASE_LOST",
      });
    }
    emit(this.lostListeners, (l) => l(writer.shard, reason, error));
  }
}

/**
 * Calls every listener. Listeners run inside database callbacks, where a throw would become an
 * unhandled rejection, so one that throws is reported as a process warning and the rest still run.
 */
export function emit<L>(listeners: ReadonlySet<L>, call: (listener: L) => void): void {
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
