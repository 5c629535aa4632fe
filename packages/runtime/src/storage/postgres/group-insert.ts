/*
 * Group commit on PostgreSQL: how an append to an owned shard becomes durable.
 *
 * Appends made while the shard has no batch in flight are sent on the next microtask; appends made
 * while a batch is in flight form the next batch. A batch is one statement in its own implicit
 * transaction that stores it as one row: the bodies end to end, with the stream keys and where each
 * body ends as binary arrays (see binary-array.ts). The database's work is mostly per row and per
 * index entry, so a batch of hundreds of entries pays it once instead of once per entry.
 * The statement stores the row only if the shard's lease row still names this owner at this epoch
 * and has not expired on the database clock, locking the row `FOR SHARE` so no takeover can commit
 * in between. The database answers after the commit, which is when the batch's promise resolves.
 *
 * Durability rules kept here: a shard has at most one batch in flight, so batches commit in order;
 * the first failed statement, or one that finds the lease gone, stops the shard for this process
 * (the failing batch, every queued batch and every later append reject with a `StorageError`), and
 * a failed statement is never retried, since its commit may or may not have happened. Seqs of a
 * shard only grow, across holders too: a statement that drops also records the last seq it
 * numbered in the lease row, since the rows it deletes or never stores may have held the last ones.
 */
import type pg from "pg";
import { ShardMovedError, StorageError } from "../../core/errors.js";
import { BatchFront, PendingBatch } from "../batch-front.js";
import { type LogEntry, MAX_ENTRY_BYTES } from "../log.js";
import { Int4ArrayWriter, TextArrayWriter } from "./binary-array.js";
import { dropFence, leaseFence } from "./leases.js";
import type { Tables } from "./schema.js";
import type { ShardIndex } from "./shard-index.js";

/** Why a shard stopped for this process. */
export type StopReason = "taken" | "expired" | "failed" | "released";

/** Batches past either bound go in the next statement (a batch always takes its first append). */
const MAX_BATCH_ENTRIES = 8192;
const MAX_BATCH_BYTES = 8 * 1024 * 1024;
/** Longest stream key accepted, in UTF-8 bytes. */
const MAX_STREAM_BYTES = 8192;
/** Largest body accepted: a bytea value is at most 1 GiB, and a batch is sent as one. */
const MAX_BODY_BYTES = MAX_ENTRY_BYTES;

export interface ShardWriterOptions {
  readonly pool: pg.Pool;
  readonly tables: Tables;
  readonly owner: string;
  readonly shard: number;
  readonly epoch: number;
  /** The highest `seq` any holder of the shard used before this lease (0 when none). */
  readonly lastSeq: number;
  readonly index: ShardIndex;
  /** Told after each committed batch. */
  /** A batch of `entries` entries and `bytes` bytes was committed, `ms` after its statement was sent. */
  readonly committed: (entries: number, bytes: number, ms: number) => void;
  /** Told once, when a statement fails or finds the lease gone; the writer has already stopped. */
  readonly stopped: (error: StorageError, reason: StopReason) => void;
}

/** Appends and drops waiting for one statement. */
class Batch extends PendingBatch {
  buf: Buffer = Buffer.allocUnsafe(16 * 1024);
  len = 0;
  /** Entries in the batch; the arrays below are reused from batch to batch and hold stale items past it. */
  count = 0;
  readonly streams: string[] = [];
  /** Where each body ends in `buf`. */
  readonly ends: number[] = [];
  /** The statement's array parameters, built as entries arrive: stream keys and where each body ends. */
  readonly names = new TextArrayWriter();
  readonly endsParam = new Int4ArrayWriter();
  /** Drops in the batch: each applies to the entries before `at`. Rare, so a plain list. */
  readonly drops: { at: number; streams: readonly string[] }[] = [];
  /** When the batch's statement was sent (`performance.now()`). */
  sentAt = 0;

  get empty(): boolean {
    return this.count === 0 && this.drops.length === 0;
  }

  add(stream: string, body: Uint8Array): void {
    if (this.len + body.length > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + body.length));
      this.buf.copy(bigger, 0, 0, this.len);
      this.buf = bigger;
    }
    this.buf.set(body, this.len);
    this.len += body.length;
    this.streams[this.count] = stream;
    this.ends[this.count] = this.len;
    this.count++;
    this.names.push(stream);
    this.endsParam.push(this.len);
  }

  /** 1-based positions of the entries a later drop in the same batch cancels. */
  deadPositions(): Set<number> {
    const dead = new Set<number>();
    for (let i = 0; i < this.count; i++) {
      const stream = this.streams[i]!;
      if (this.drops.some((d) => d.at > i && d.streams.includes(stream))) dead.add(i + 1);
    }
    return dead;
  }

  reset(): void {
    this.len = 0;
    this.count = 0;
    this.names.clear();
    this.endsParam.clear();
    this.drops.length = 0;
    this.forgetWaiters();
  }
}

/**
 * The append side of one shard this process holds the lease of, at one epoch. A new lease (even of
 * the same shard) gets a new writer. Appends batch through the front end shared with the local log;
 * the flush strategy is this writer's: one statement in flight, the next sent when it commits.
 */
export class ShardWriter extends BatchFront<Batch> {
  /** Set once the shard stopped for this writer; later appends reject with it. */
  private fatal: StorageError | undefined;
  /** Set when the writer takes no more appends but still commits what it has queued. */
  private sealed: StorageError | undefined;
  private readonly queue: Batch[] = [];
  private spare: Batch | undefined;
  private flying: Batch | undefined;
  private scheduled = false;
  private lastSeq: number;
  private idleWaiters: (() => void)[] = [];
  private readonly insertOnly: pg.QueryConfig;
  private readonly insertAndDrop: pg.QueryConfig;

  constructor(private readonly o: ShardWriterOptions) {
    super();
    this.lastSeq = o.lastSeq;
    const t = o.tables;
    const lease = leaseFence(t);
    this.insertOnly = {
      name: `fusee_insert_${t.schema}`,
      text: `WITH ${lease} INSERT INTO ${t.batches} (shard, seq, streams, ends, body) SELECT $1, $4, $5, $6, $7 FROM lease`,
    };
    // A drop deletes the rows it leaves with no live entry and marks its entries dead in the others;
    // the batch's own row is stored unless every entry in it was dropped too. Its fence records the
    // last seq the batch numbers ($13), which no row may hold once the statement commits.
    this.insertAndDrop = {
      name: `fusee_insert_drop_${t.schema}`,
      text: `
        WITH ${dropFence(t, "$13")},
        gone AS (
          DELETE FROM ${t.batches} AS b USING lease
           WHERE b.shard = $1 AND b.seq = ANY ($9::bigint[])),
        marked AS (
          UPDATE ${t.batches} AS b SET dead = b.dead || m.positions
            FROM lease, (SELECT row_seq, array_agg(position) AS positions
                           FROM unnest($10::bigint[], $11::integer[]) AS x(row_seq, position)
                          GROUP BY row_seq) AS m
           WHERE b.shard = $1 AND b.seq = m.row_seq),
        inserted AS (
          INSERT INTO ${t.batches} (shard, seq, streams, ends, body, dead)
          SELECT $1, $4, $5, $6, $7, $8 FROM lease WHERE $12::boolean)
        SELECT count(*)::integer AS leased FROM lease`,
    };
  }

  get shard(): number {
    return this.o.shard;
  }

  get epoch(): number {
    return this.o.epoch;
  }

  /** The error that stopped the shard for this writer, if any. */
  get failure(): StorageError | undefined {
    return this.fatal;
  }

  /** True until the writer stopped or was sealed. */
  get healthy(): boolean {
    return this.fatal === undefined && this.sealed === undefined;
  }

  drop(streams: readonly string[]): Promise<void> {
    const refused = this.refusal();
    if (refused !== undefined) return Promise.reject(refused);
    if (streams.length === 0) return Promise.resolve();
    const b = this.openBatch(0);
    b.drops.push({ at: b.count, streams: [...streams] });
    return this.promiseOf(b);
  }

  /** Resolves once nothing is queued or in flight. */
  idle(): Promise<void> {
    if (this.flying === undefined && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Refuses new appends with `error`, lets what is queued commit, and resolves when it has. */
  seal(error: StorageError): Promise<void> {
    this.sealed ??= error;
    return this.idle();
  }

  /**
   * Stops the shard at once (its lease is gone): queued batches and later appends reject with
   * `error`. A batch in flight settles on its own, since its statement checks the lease itself.
   */
  halt(error: StorageError): void {
    if (this.fatal !== undefined) return;
    this.fatal = error;
    const queued = this.queue.splice(0);
    for (const b of queued) b.settle(error);
    this.settleIdle();
  }

  protected refusal(): StorageError | undefined {
    return this.fatal ?? this.sealed;
  }

  protected add(stream: string, body: Uint8Array): Batch {
    const b = this.openBatch(body.length);
    b.add(stream, body);
    return b;
  }

  protected addAll(entries: readonly LogEntry[]): Batch {
    const total = entries.reduce((n, e) => n + e.body.length, 0);
    const b = this.openBatch(total, entries.length);
    for (const e of entries) b.add(e.stream, e.body);
    return b;
  }

  protected check(stream: string, bytes: number): StorageError | undefined {
    if (bytes > MAX_BODY_BYTES) {
      return new StorageError(
        `an entry of stream "${stream.slice(0, 80)}" for shard ${this.o.shard} has ${bytes} bytes; ` + `the limit is ${MAX_BODY_BYTES}`,
      );
    }
    if (stream.length * 3 > MAX_STREAM_BYTES && Buffer.byteLength(stream) > MAX_STREAM_BYTES) {
      return new StorageError(`stream key "${stream.slice(0, 80)}…" is longer than ${MAX_STREAM_BYTES} UTF-8 bytes`);
    }
    if (stream.includes("\0")) {
      return new StorageError(`stream key "${stream.slice(0, 80)}" contains a NUL character, which PostgreSQL text cannot hold`);
    }
    return undefined;
  }

  /** The batch new appends go to, opening another when the last is full. */
  private openBatch(bytes: number, entries = 1): Batch {
    let b = this.queue.at(-1);
    if (b === undefined || (!b.empty && (b.len + bytes > MAX_BATCH_BYTES || b.count + entries > MAX_BATCH_ENTRIES))) {
      b = this.spare ?? new Batch();
      this.spare = undefined;
      this.queue.push(b);
    }
    return b;
  }

  /** Sends the next batch on a microtask unless one is in flight (its commit sends the next). */
  protected want(): void {
    if (this.flying === undefined && !this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.flying !== undefined || this.fatal !== undefined) return;
    const b = this.queue.shift();
    if (b === undefined) {
      this.settleIdle();
      return;
    }
    this.flying = b;
    b.sentAt = performance.now();
    const values: unknown[] = [
      this.o.shard,
      this.o.owner,
      this.o.epoch,
      this.lastSeq + 1,
      b.names.bytes(),
      b.endsParam.bytes(),
      b.buf.subarray(0, b.len),
    ];
    if (b.drops.length === 0) {
      this.o.pool.query({ ...this.insertOnly, values }).then(
        (result) => {
          if (result.rowCount === 1) this.committed(b, undefined, undefined);
          else this.leaseGone(b).catch((e: unknown) => this.failed(b, e));
        },
        (err: unknown) => this.failed(b, err),
      );
      return;
    }
    const dead = b.deadPositions();
    const dropped = b.drops.flatMap((d) => d.streams);
    const plan = this.o.index.planDrop(dropped);
    values.push([...dead], plan.gone, plan.markRows, plan.markPositions, b.count > dead.size, this.lastSeq + b.count);
    this.o.pool.query<{ leased: number }>({ ...this.insertAndDrop, values }).then(
      (result) => {
        if (result.rows[0]?.leased === 1) this.committed(b, dead, dropped);
        else this.leaseGone(b).catch((e: unknown) => this.failed(b, e));
      },
      (err: unknown) => this.failed(b, err),
    );
  };

  /** Brings the index up to a committed batch: its drops (the streams in `dropped`), then its row. */
  private committed(b: Batch, dead: ReadonlySet<number> | undefined, dropped: readonly string[] | undefined): void {
    const first = this.lastSeq + 1;
    this.lastSeq += b.count;
    if (dropped !== undefined) this.o.index.applyDrop(dropped);
    this.o.index.addRow(first, b.count, b.streams, b.ends, dead);
    this.o.committed(b.count, b.len, performance.now() - b.sentAt);
    this.flying = undefined;
    b.settle(undefined);
    b.reset();
    this.spare = b;
    this.next();
  }

  /** The statement stored nothing: the lease row no longer names this owner at this epoch. */
  private async leaseGone(b: Batch): Promise<void> {
    const t = this.o.tables;
    let reason: StopReason = "expired";
    let where = `${t.leases} could not be read`;
    try {
      const found = await this.o.pool.query<{ owner: string | null; epoch: string; expires_at: Date; live: boolean }>(
        `SELECT owner, epoch, expires_at, expires_at > clock_timestamp() AS live FROM ${t.leases} WHERE shard = $1`,
        [this.o.shard],
      );
      const row = found.rows[0];
      if (row !== undefined) {
        if (Number(row.epoch) !== this.o.epoch || row.owner !== this.o.owner) reason = "taken";
        where =
          row.owner === null
            ? `${t.leases} shows it free at epoch ${row.epoch}`
            : `${t.leases} shows owner "${row.owner}" at epoch ${row.epoch}, ${row.live ? "expiring" : "expired"} at ${row.expires_at.toISOString()}`;
      }
    } catch {
      // The message says the lease row could not be read; the shard stops all the same.
    }
    const error = new ShardMovedError(
      `shard ${this.o.shard}: owner "${this.o.owner}" no longer holds the lease at epoch ${this.o.epoch} (${where}); ` +
        `the batch of ${b.count} entries was not stored and nothing appended to this shard by this process will be`,
    );
    this.stop(b, error, reason);
  }

  private failed(b: Batch, err: unknown): void {
    const cause = err instanceof Error ? err : new Error(String(err));
    const error = new StorageError(
      `shard ${this.o.shard} stopped: inserting a batch of ${b.count} entries into ${this.o.tables.batches} ` +
        `(owner "${this.o.owner}", epoch ${this.o.epoch}) failed: ${cause.message}. Whether it committed is unknown, so ` +
        "nothing appended to this shard after it is acknowledged and the statement is not retried; the lease is given " +
        "back, and the shard is taken again at a new epoch from what the database holds",
      { cause, shard: this.o.shard },
    );
    this.stop(b, error, "failed");
  }

  /**
   * The shard is marked stopped (and its log told) before the failed batch's waiters hear of it, so
   * a waiter that asks whether this process still holds the shard already hears that it does not.
   */
  private stop(b: Batch, error: StorageError, reason: StopReason): void {
    this.flying = undefined;
    if (this.fatal === undefined) {
      this.halt(error);
      this.o.stopped(error, reason);
    }
    b.settle(error);
    this.settleIdle();
  }

  private next(): void {
    if (this.queue.length > 0 && this.fatal === undefined) this.flush();
    else this.settleIdle();
  }

  private settleIdle(): void {
    if (this.flying !== undefined || this.queue.length > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
