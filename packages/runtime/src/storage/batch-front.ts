/*
 * The batching front end both storage engines share: how an append joins a batch and how its
 * caller hears that the batch is durable. What a batch holds and how it is flushed differ per
 * engine, so a writer brings two things of its own:
 *   - the batch: frames encoded into a write buffer (local segments), or bodies and key arrays for
 *     one statement (PostgreSQL);
 *   - the flush strategy, `want`: the local group commit asks a scheduler shared by the shards to
 *     write and sync on the next tick; the PostgreSQL group insert sends on a microtask unless a
 *     statement is in flight, whose commit sends the next.
 *
 * Rules kept here for both: a refused append (a fatal or sealed shard, an entry over the limits)
 * is never added to a batch; `appendThen` waiters hear on a later microtask, never during the call;
 * a batch tells its waiters, in append order, before its promise settles.
 */
import { StorageError } from "../core/errors.js";
import { tellWaiters } from "./append-waiters.js";
import type { AppendWaiter, LogEntry } from "./log.js";

/** The part of a batch the front end keeps: who waits for it. */
export class PendingBatch {
  /** Callers told through `appendThen`, in append order; the array keeps its capacity between batches. */
  readonly waiters: AppendWaiter[] = [];
  /** Made only when a caller awaits the batch (`append`, `appendAll`, a drop, `idle`). */
  promise: Promise<void> | undefined;
  resolve: () => void = noop;
  reject: (err: Error) => void = noop;

  /** Tells the waiters and the promise the batch's outcome: durable when `error` is undefined. */
  settle(error: Error | undefined): void {
    tellWaiters(this.waiters, error);
    if (error === undefined) this.resolve();
    else this.reject(error);
  }

  /** Forgets the waiters of a settled batch before it is reused. */
  protected forgetWaiters(): void {
    this.waiters.length = 0;
    this.promise = undefined;
    this.resolve = noop;
    this.reject = noop;
  }
}

/** Appends of one shard gathered into batches; the writer decides what a batch is and when it flushes. */
export abstract class BatchFront<B extends PendingBatch> {
  append(entry: LogEntry): Promise<void> {
    const b = this.admit(entry.stream, entry.body);
    return b instanceof StorageError ? Promise.reject(b) : this.promiseOf(b);
  }

  appendThen(stream: string, body: Uint8Array, waiter: AppendWaiter): void {
    const b = this.admit(stream, body);
    if (b instanceof StorageError) {
      queueMicrotask(() => waiter.failed(b));
      return;
    }
    b.waiters.push(waiter);
    this.want(b);
  }

  /** Appends entries in order, all in one batch; an entry over the limits refuses them all. */
  appendAll(entries: readonly LogEntry[]): Promise<void> {
    const refused = this.refusal();
    if (refused !== undefined) return Promise.reject(refused);
    for (const e of entries) {
      const problem = this.check(e.stream, e.body.length);
      if (problem !== undefined) return Promise.reject(problem);
    }
    if (entries.length === 0) return Promise.resolve();
    return this.promiseOf(this.addAll(entries));
  }

  /** Why the shard takes no append now (it is fatal or sealed), if it does not. */
  protected abstract refusal(): StorageError | undefined;
  /** Why an entry of `stream` with a body of `bytes` bytes is refused, if it is. */
  protected abstract check(stream: string, bytes: number): StorageError | undefined;
  /** Adds one checked entry to the batch new appends go to and returns that batch. */
  protected abstract add(stream: string, body: Uint8Array): B;
  /** Adds checked entries, in order, to one batch and returns it. */
  protected abstract addAll(entries: readonly LogEntry[]): B;
  /** The flush strategy: `b` has something to flush (called per append; cheap when already asked). */
  protected abstract want(b: B): void;

  /** The promise of a batch, made on first use, and the batch asked for. */
  protected promiseOf(b: B): Promise<void> {
    const promise = (b.promise ??= new Promise<void>((resolve, reject) => {
      b.resolve = resolve;
      b.reject = reject;
    }));
    // `want` may flush and settle the batch at once, and a settled batch forgets its promise.
    this.want(b);
    return promise;
  }

  private admit(stream: string, body: Uint8Array): B | StorageError {
    const problem = this.refusal() ?? this.check(stream, body.length);
    return problem ?? this.add(stream, body);
  }
}

function noop(): void {}
