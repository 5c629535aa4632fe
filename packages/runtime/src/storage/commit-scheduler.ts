/*
 * When and how the shards of a local log flush their open batches; the why is at the top of
 * `group-commit.ts`.
 */

/** What the scheduler needs of a shard's committer (`ShardCommitter` in `group-commit.ts`). */
export interface FlushTarget {
  /** Set while the scheduler has this committer in its ready list. */
  queued: boolean;
  /** A batch is being written or synced. */
  readonly busy: boolean;
  readonly hasPending: boolean;
  readonly pendingFrames: number;
  readonly failure: Error | undefined;
  /** Writes and syncs the open batch on the calling thread. */
  flushInline(): void;
  /** Writes the open batch and syncs it on the pool; `done` runs when it settled. */
  flushAsync(done: () => void): void;
}

/**
 * Decides when and how the shards with a ready batch flush (see the top of `group-commit.ts`): one shard
 * alone syncs inline, several sync in parallel on the pool.
 *
 * A flush normally waits for `setImmediate`, so every append of the turn joins the batch. When
 * the last flush carried a single frame (one appender awaiting each append), waiting for the next
 * loop turn only adds latency: measured on the target machine, an event-loop turn between two
 * syncs adds 20-25 us to a ~145 us write + fdatasync, a microtask 3 us. So after a one-frame
 * batch the next flush runs on a microtask, but never more than {@link MAX_CHAINED} times in a
 * row, so timers and I/O still get a turn at least every few syncs.
 */
export class CommitScheduler {
  private ready: FlushTarget[] = [];
  private scheduled = false;
  private lastFrames = 0;
  private chained = 0;
  private asyncInFlight = 0;
  /** Set from a flush inside an append until the microtasks of that moment ran. */
  private inCallTurn = false;

  want(c: FlushTarget): void {
    if (!c.queued) {
      c.queued = true;
      this.ready.push(c);
    }
    if (this.scheduled) return;
    this.scheduled = true;
    if (this.lastFrames === 1 && this.chained < MAX_CHAINED) {
      this.chained += 1;
      queueMicrotask(this.tick);
    } else {
      this.chained = 0;
      setImmediate(this.tick);
    }
  }

  /**
   * Whether a shard may write and sync its one-entry batch inside the append that made it (see
   * `ShardCommitter.want`): only while the last batches held one entry each and nothing else is
   * scheduled or syncing, and within the same bound of {@link MAX_CHAINED} flushes without a loop
   * turn. A second append in the same turn as such a flush shows that several appenders are at
   * work: from then on appends gather in batches again, until a batch holds one entry.
   */
  claimInCall(): boolean {
    if (this.inCallTurn) {
      this.lastFrames = 0;
      return false;
    }
    if (this.lastFrames !== 1 || this.scheduled || this.asyncInFlight > 0 || this.chained >= MAX_CHAINED) return false;
    this.chained += 1;
    this.inCallTurn = true;
    queueMicrotask(this.endInCallTurn);
    return true;
  }

  private readonly endInCallTurn = (): void => {
    this.inCallTurn = false;
  };

  private settled(c: FlushTarget): void {
    this.asyncInFlight -= 1;
    if (c.hasPending && c.failure === undefined) this.want(c);
  }

  private readonly tick = (): void => {
    this.scheduled = false;
    const list = this.ready;
    this.ready = [];
    let runnable = 0;
    let frames = 0;
    for (const c of list) {
      c.queued = false;
      if (!c.busy && c.hasPending && c.failure === undefined) {
        list[runnable++] = c;
        frames += c.pendingFrames;
      }
    }
    this.lastFrames = frames;
    if (runnable === 1 && this.asyncInFlight === 0) {
      list[0]!.flushInline();
      return;
    }
    for (let i = 0; i < runnable; i++) {
      const c = list[i]!;
      this.asyncInFlight += 1;
      c.flushAsync(() => this.settled(c));
    }
  };
}

/** Consecutive microtask flushes before the scheduler yields a full event-loop turn. */
const MAX_CHAINED = 8;
