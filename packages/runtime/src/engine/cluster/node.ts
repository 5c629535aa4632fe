/*
 * One engine process of a cluster: turns the log's lease events into engine calls (a shard taken
 * is recovered, a shard lost is forgotten), answers the requests other processes send to the
 * shards it holds, and forwards operations on runs of shards it does not hold to their owner.
 */
import { RejectedError, ShutDownError, StorageError } from "../../core/errors.js";
import type { Answer, PendingRequest, PostgresLog, Reply, RequestFence, RequestTable } from "../../storage/postgres/index.js";
import type { LocalRuns } from "../local-runs.js";
import type { RunCall } from "../run-service.js";
import { perform } from "./operations.js";
import { BatchQueue } from "./batch-queue.js";
import { RequestClient } from "./request-client.js";
import { ClusterPermits } from "./permits.js";
import type { SharedPermits } from "../limits.js";
import { decodeError, decodeValue, encodeError, encodeValue } from "./wire.js";

/** What a cluster process needs of its engine. */
export interface ClusterHost {
  /** The runs of the shards this process holds, which perform the requests sent to it. */
  readonly runs: LocalRuns;
  /**
   * Loads the runs of the shards into the index and resumes them; returns the shards whose records
   * could not be loaded, with why (none of their runs is left in the index). Throws when what links
   * runs across the shards could not be settled, which fails them all.
   */
  recoverShards(shards: readonly number[]): Promise<ReadonlyMap<number, unknown>>;
  /** Drops the shard's runs from the index: their executors, timers and waiters. */
  forgetShard(shard: number): void;
  /**
   * The caller's trace context to send with a context call, and the way to perform a received
   * call under it; absent when the engine records no traces.
   */
  readonly trace?: {
    current(): string | undefined;
    within<T>(traceparent: string | undefined, fn: () => Promise<T>): Promise<T>;
  };
}

/** How a cluster process treats the calls it forwards. */
export interface ClusterOptions {
  /**
   * How long a context call waits for the owner's answer before it fails with
   * `ForwardTimeoutError` (calls that wait for a run's result or start wait as long as they need).
   */
  readonly forwardTimeoutMs: number;
}

/** A call as it travels to the shard's owner: its arguments and the caller's trace context. */
interface ForwardedCall {
  readonly args: readonly unknown[];
  /** A W3C `traceparent`, when the caller was in a trace. */
  readonly trace?: string;
}

/** RequestContext calls that only wait for a run's progress: they take as long as the run does. */
const WAITS = new Set<string>(["awaitResult", "awaitStarted"]);

// How often replies no process took (its asker died) are deleted.
const REPLY_SWEEP_MS = 60_000;

export class ClusterNode {
  /** Shards held and recovered: operations on their runs are performed here. */
  private readonly ready = new Set<number>();
  /** Shards taken and waiting for their recovery. */
  private readonly acquiring = new Set<number>();
  /** Requests being performed here, so a wake-up during one does not start it again. */
  private readonly inFlight = new Set<string>();
  /** Shards taken over since their last drain: their waiting requests may have been performed by the previous owner. */
  private readonly takenOver = new Set<number>();
  /** Requests an earlier owner of their shard may have performed (`RequestInfo.suspect` in operations.ts). */
  private readonly suspects = new Set<string>();
  /** Replies performed here that could not be stored: stored again, never performed again. */
  private readonly unanswered = new Map<string, { readonly shard: number; readonly reply: Reply; readonly asker: string | null }>();
  /** Sends this process's requests and takes their replies. */
  private readonly client: RequestClient;
  /** Replies to other processes' requests, stored a batch at a time. */
  private readonly answers: BatchQueue<Answer>;
  private readonly draining = new Map<number, Promise<void>>();
  private readonly redrain = new Set<number>();
  private chain: Promise<void> = Promise.resolve();
  private readonly unsubscribe: (() => void)[] = [];
  private closed = false;
  private sweep: NodeJS.Timeout | undefined;

  private constructor(
    private readonly engine: ClusterHost,
    private readonly log: PostgresLog,
    private readonly requests: RequestTable,
    private readonly permits: ClusterPermits,
    private readonly options: ClusterOptions,
  ) {
    this.client = new RequestClient(requests, log.owner);
    this.answers = new BatchQueue((answers) => requests.answer(answers));
  }

  /**
   * Joins the cluster: hands `sharePermits` the limit permits shared with the other processes,
   * recovers the shards the log already holds, follows later acquisitions and losses, and answers
   * requests. Resolves once the shards held at the call are recovered.
   */
  static async join(
    engine: ClusterHost,
    log: PostgresLog,
    options: ClusterOptions,
    sharePermits: (permits: SharedPermits) => void,
  ): Promise<ClusterNode> {
    const tables = log.clusterTables();
    const node = new ClusterNode(engine, log, tables.requests, new ClusterPermits(tables.permits, log.owner), options);
    sharePermits(node.permits);
    node.unsubscribe.push(log.onAcquired((shard) => node.acquired(shard)));
    node.unsubscribe.push(log.onLost((shard) => node.lost(shard)));
    try {
      node.unsubscribe.push(await log.onNotify((shard) => node.drain(shard)));
      // Any reply for this process may be there: every waiting request looks for its own.
      node.unsubscribe.push(await log.onOwnerWake(() => node.client.woken()));
      // A sweep that fails leaves old replies for the next sweep.
      node.sweep = setInterval(() => void node.requests.sweepReplies().catch(() => undefined), REPLY_SWEEP_MS);
      node.sweep.unref();
      for (const shard of log.ownedShards()) node.acquired(shard);
      await node.chain;
    } catch (e) {
      await node.close();
      throw e;
    }
    return node;
  }

  /** Whether this process holds the shard and has recovered its runs. */
  owns(shard: number): boolean {
    return this.ready.has(shard) && this.log.epochOf(shard) !== undefined;
  }

  /** Whether this process holds the shard's lease (recovered or not) and it has not run out. */
  leased(shard: number): boolean {
    return this.log.epochOf(shard) !== undefined;
  }

  /**
   * Has the owner of `shard` perform an operation and returns its answer, or throws the error it
   * threw (of the same class). Waits while no process holds the shard (the request is kept and the
   * next owner answers it), up to `forwardTimeoutMs` unless the call only waits for a run. With
   * `fence`, the owner performs it only while this process still holds shard `fence` at the epoch
   * it holds now, as the lease row says when the owner takes the request up.
   *
   * @throws ForwardTimeoutError when no owner answered in time.
   * @throws RejectedError with reason `lease-lost` when this process does not hold `fence` now (nothing
   * is asked), or no longer held it when the owner took the request up (nothing is performed).
   */
  async forward(shard: number, call: RunCall, args: readonly unknown[], fence?: number): Promise<unknown> {
    this.assertOpen();
    let lease: RequestFence | undefined;
    if (fence !== undefined) {
      const epoch = this.log.epochOf(fence);
      if (epoch === undefined) {
        throw new RejectedError(
          `a ${call} request on behalf of shard ${fence} was not sent to the owner of shard ${shard}: owner "${this.log.owner}" ` +
            `no longer holds the lease on shard ${fence} (it moved or ran out); the shard's next holder deals with what it asked for`,
          { reason: "lease-lost" },
        );
      }
      lease = { shard: fence, epoch };
    }
    const timeoutMs = WAITS.has(call) ? undefined : this.options.forwardTimeoutMs;
    const trace = this.engine.trace?.current();
    const request: ForwardedCall = trace === undefined ? { args } : { args, trace };
    const reply = await this.client.request(shard, call, encodeValue(request), timeoutMs, lease);
    if (reply.outcome === "ok") return decodeValue(reply.payload);
    throw decodeError(reply.payload);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweep);
    for (const u of this.unsubscribe) u();
    await this.chain;
    await Promise.allSettled([...this.draining.values()]);
    this.client.close();
    await this.requests.close();
    await this.permits.close();
  }

  private acquired(shard: number): void {
    this.acquiring.add(shard);
    this.serial(async () => {
      // Shards taken together (a dead process's share) are recovered together, their reads overlapping.
      const shards = [...this.acquiring].filter((s) => !this.ready.has(s) && this.log.epochOf(s) !== undefined);
      this.acquiring.clear();
      if (shards.length === 0) return;
      let failed: ReadonlyMap<number, unknown>;
      try {
        failed = await this.engine.recoverShards(shards);
      } catch (e) {
        failed = new Map(shards.map((s) => [s, e]));
      }
      // Each failed shard is given up alone: the shards taken with it go on here.
      for (const [s, e] of failed) {
        // Its runs half loaded are dropped and its lease given up, so another process (or this one,
        // after a back-off) takes the shard and recovers it from the database.
        this.engine.forgetShard(s);
        this.log.abandon(s, e);
        this.warn(`could not recover shard ${s} and gave its lease up`, e);
      }
      for (const s of shards) {
        if (failed.has(s)) continue;
        // A shard lost while it was recovered is forgotten again: its next owner runs it.
        if (this.log.epochOf(s) === undefined) {
          this.engine.forgetShard(s);
          continue;
        }
        this.ready.add(s);
        this.takenOver.add(s);
        this.drain(s);
      }
    }, `recovering the shards it took (${shard} among them)`);
  }

  /**
   * Forgets the shard's runs at once, which aborts their running steps (another process may run
   * them now), and again in turn after any recovery in progress, which may have loaded some.
   */
  private lost(shard: number): void {
    this.ready.delete(shard);
    for (const [id, { shard: of }] of this.unanswered) if (of === shard) this.unanswered.delete(id);
    if (!this.closed) this.engine.forgetShard(shard);
    this.serial(async () => {
      if (!this.ready.has(shard)) this.engine.forgetShard(shard);
    }, `forgetting shard ${shard}`);
  }

  /** Runs lease work one piece at a time, in the order the log reported it. */
  private serial(work: () => Promise<void>, what: string): void {
    this.chain = this.chain.then(() => (this.closed ? undefined : work())).catch((e: unknown) => this.warn(`failed ${what}`, e));
  }

  private warn(what: string, e: unknown): void {
    if (!this.closed)
      process.emitWarning(`cluster owner "${this.log.owner}" ${what}: ${(e as Error)?.stack ?? String(e)}`, "FuseeClusterWarning");
  }

  /** Starts every waiting request of a shard this process holds; a wake-up during a drain drains again after it. */
  private drain(shard: number): void {
    if (this.closed || !this.owns(shard)) return;
    if (this.draining.has(shard)) {
      this.redrain.add(shard);
      return;
    }
    const run = (async () => {
      try {
        const takenOver = this.takenOver.has(shard);
        const pending = await this.requests.pending(shard, this.inFlight);
        this.takenOver.delete(shard);
        for (const request of pending) {
          if (takenOver) this.suspects.add(request.id);
          if (this.inFlight.has(request.id)) continue;
          this.inFlight.add(request.id);
          this.answer(shard, request)
            .finally(() => this.inFlight.delete(request.id))
            .catch((e: unknown) => this.warn(`failed to answer request ${request.id}`, e));
        }
      } catch {
        // The next wake-up or poll drains again.
      } finally {
        this.draining.delete(shard);
        if (this.redrain.delete(shard)) this.drain(shard);
      }
    })();
    this.draining.set(shard, run);
  }

  private async answer(shard: number, { id, kind, payload, asker, fence }: PendingRequest): Promise<void> {
    let reply = this.unanswered.get(id)?.reply;
    if (reply === undefined) {
      const epoch = this.log.epochOf(shard);
      try {
        const { args, trace } = forwardedCall(decodeValue(payload));
        const info = { id, suspect: this.suspects.has(id), ...(fence === undefined ? {} : { fence: { ...fence, asker } }) };
        const run = (): Promise<unknown> => perform(this.engine.runs, kind, args, info);
        const value = await (this.engine.trace === undefined ? run() : this.engine.trace.within(trace, run));
        reply = { outcome: "ok", payload: encodeValue(value) };
      } catch (e) {
        // A shard lost while its request was performed is left to its next owner, which answers it:
        // this process again, perhaps, at a later epoch, whose drains perform it anew once this
        // performance is no longer in flight.
        if (this.closed || (e instanceof StorageError && (!this.owns(shard) || this.log.epochOf(shard) !== epoch))) return;
        reply = { outcome: "error", payload: encodeError(e) };
      }
      ClusterNode.afterPerform?.(kind);
    }
    try {
      await this.answers.push({ id, reply, asker });
      this.unanswered.delete(id);
      this.suspects.delete(id);
    } catch {
      // The request stays waiting; the next drain stores this reply instead of performing it again.
      this.unanswered.set(id, { shard, reply, asker });
    }
  }

  /** @internal Called after a context request was performed and before its reply is stored; crash tests stop the process there. */
  static afterPerform: ((kind: string) => void) | undefined;

  private assertOpen(): void {
    if (this.closed) throw new ShutDownError();
  }
}

/** Reads a context call; a process of an earlier version sends its arguments alone. */
function forwardedCall(decoded: unknown): ForwardedCall {
  return Array.isArray(decoded) ? { args: decoded } : (decoded as ForwardedCall);
}
