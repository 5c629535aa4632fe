import { randomUUID } from "node:crypto";
import { ForwardTimeoutError, ShutDownError, StorageError } from "../../core/errors.js";
import type { NewRequest, Reply, RequestFence, RequestTable } from "../../storage/postgres/index.js";
import { BatchQueue } from "./batch-queue.js";

// How often the replies of waiting requests are looked for when no owner says one is there: from the
// first to the last interval, doubling, and back to the first whenever a reply arrives.
const POLL_FIRST_MS = 5;
const POLL_LAST_MS = 200;
/**
 * Failed reads of the replies in a row before the waiting requests fail: a session terminated or
 * a connection reset is over at the next statement, and the requests it waits for are stored.
 */
const TAKE_TRIES = 6;
/** Looks for whether a request whose insert failed was stored, before the caller is told it failed. */
const STORED_TRIES = 3;

interface Waiting {
  readonly describe: string;
  readonly shard: number;
  resolve(reply: Reply): void;
  reject(error: Error): void;
}

/**
 * The asking side of cluster requests. Requests asked while an insert is in flight go out together
 * in the next one (one commit for many), and one loop takes the replies of every waiting request in
 * one statement, right after an owner says it answered one of this process's requests, or at the
 * next poll.
 */
export class RequestClient {
  private readonly asks: BatchQueue<NewRequest>;
  private readonly waiting = new Map<string, Waiting>();
  private polling = false;
  /** Wake-ups since the loop last took replies: one arriving during a take must not be slept through. */
  private wakes = 0;
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly table: RequestTable,
    /** This process's owner name: the answering owner wakes it by this name. */
    private readonly asker: string,
  ) {
    this.asks = new BatchQueue((requests) => this.table.ask(requests, this.asker));
  }

  /**
   * Stores a request for the owner of `shard` and resolves with the owner's reply, waiting up to
   * `timeoutMs` for it (forever when undefined). With `fence`, the owner performs it only while this
   * process holds the fence's shard at its epoch.
   *
   * @throws StorageError when the request or its reply cannot be read or written.
   * @throws ForwardTimeoutError when no reply came in time; the request is withdrawn.
   */
  async request(shard: number, kind: string, payload: Buffer, timeoutMs?: number, fence?: RequestFence): Promise<Reply> {
    const id = randomUUID();
    const describe = `${kind} request ${id} to the owner of shard ${shard}`;
    const reply = new Promise<Reply>((resolve, reject) => this.waiting.set(id, { describe, shard, resolve, reject }));
    // It may fail (shutdown, a failed poll) before this call gets to await it.
    reply.catch(() => undefined);
    try {
      await this.asks.push({ id, shard, kind, payload, ...(fence === undefined ? {} : { fence }) });
    } catch (e) {
      // The insert's commit may have landed before its session ended: then the owner performs the
      // request, and the caller waits for its answer like any other.
      if (!(await this.storedDespite(id))) {
        this.waiting.delete(id);
        throw failure(describe, shard, e);
      }
    }
    this.poll();
    if (timeoutMs === undefined) return reply;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        reply,
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(this.expired(id, describe, timeoutMs)), timeoutMs))),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** An owner answered a request of this process: its reply can be taken now. */
  woken(): void {
    this.wakes++;
    this.wake?.();
  }

  /** Fails every waiting request: the engine is shutting down. */
  close(): void {
    this.closed = true;
    const error = new ShutDownError();
    for (const w of this.waiting.values()) w.reject(error);
    this.waiting.clear();
    this.wake?.();
  }

  /** Gives a request up: it stops waiting, and it is deleted unless an owner answered it meanwhile. */
  private expired(id: string, describe: string, timeoutMs: number): ForwardTimeoutError {
    this.waiting.delete(id);
    // A request not withdrawn is answered into a reply nobody takes, which the reply sweep deletes.
    this.table.withdraw(id).catch(() => undefined);
    return new ForwardTimeoutError(
      `${describe} got no answer within ${timeoutMs} ms: no process held the shard, or its holder could not reach the database. ` +
        "The request was withdrawn, though an owner that had begun it may still complete it; ask again once the cluster has an owner for the shard " +
        "(or raise forwardTimeoutMs)",
    );
  }

  /** Whether request `id`, whose insert failed, was stored all the same; false when that cannot be read either. */
  private async storedDespite(id: string): Promise<boolean> {
    for (let attempt = 0; attempt < STORED_TRIES && !this.closed; attempt++) {
      try {
        return await this.table.stored(id);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, POLL_LAST_MS));
      }
    }
    return false;
  }

  /** Takes replies while any request waits for one; one loop serves every waiting request. */
  private poll(): void {
    if (this.polling || this.closed) return;
    this.polling = true;
    (async () => {
      let wait = POLL_FIRST_MS;
      let failures = 0;
      while (!this.closed && this.waiting.size > 0) {
        const wakesBefore = this.wakes;
        let replies: Map<string, Reply>;
        try {
          replies = await this.table.take([...this.waiting.keys()]);
          failures = 0;
        } catch (e) {
          if (++failures >= TAKE_TRIES) {
            this.failWaiting(e);
            break;
          }
          replies = new Map();
        }
        for (const [id, reply] of replies) {
          this.waiting.get(id)?.resolve(reply);
          this.waiting.delete(id);
        }
        if (replies.size > 0) wait = POLL_FIRST_MS;
        if (this.waiting.size === 0 || this.wakes !== wakesBefore) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => this.wake?.(), wait);
          this.wake = () => {
            clearTimeout(timer);
            this.wake = undefined;
            resolve();
          };
        });
        wait = Math.min(POLL_LAST_MS, wait * 2);
      }
      this.polling = false;
    })().catch((e: unknown) => {
      // The loop handles a failed take itself; anything else must still not leave a caller waiting for ever.
      this.polling = false;
      this.failWaiting(e);
    });
  }

  private failWaiting(e: unknown): void {
    for (const w of this.waiting.values()) w.reject(failure(w.describe, w.shard, e));
    this.waiting.clear();
  }
}

/**
 * A forward that failed on this process's own statements. It names the shard it went to, which
 * another process holds: the engine goes on (it stops only for a shard of its own), and the caller
 * may ask again, knowing the request may have been performed.
 */
function failure(describe: string, shard: number, e: unknown): StorageError {
  return new StorageError(`forwarding ${describe} failed: ${(e as Error)?.message ?? String(e)}`, { cause: e, shard });
}
