import type { Log } from "../storage/log.js";
import type { ChildRuns } from "./child-runs.js";
import type { FlowControl } from "./flow-control.js";
import type { RunEntry } from "./run-entry.js";
import type { RunIndex } from "./run-index.js";
import type { RunRecords } from "./run-records.js";
import type { RunRecovery, StreamReader } from "./run-recovery.js";
import type { TimerQueue } from "./timer-queue.js";

/** What loading the runs of shards needs of the runs of this process. */
export interface ShardLoadingDeps {
  readonly log: Log;
  readonly index: RunIndex;
  readonly timers: TimerQueue<RunEntry>;
  readonly flow: FlowControl;
  readonly records: RunRecords;
  readonly children: ChildRuns;
  /** Whether the runs were closed meanwhile: then no timer is armed. */
  closed(): boolean;
  /** Drops what was loaded of a shard whose load failed. */
  forgetShard(shard: number): void;
}

/** An open of every shard of a local log in one pass: the index its recovery built, and how to read the rest. */
export interface OnePassRead {
  readonly recovery: RunRecovery;
  readonly log: StreamReader;
}

/**
 * Loads the runs of shards into the engine's index from their journals: every shard when an engine
 * opens, the shards a cluster process takes over later. Durable timers are held while it loads, so
 * none fires for a run whose later records are still to be read.
 */
export class ShardLoading {
  constructor(private readonly deps: ShardLoadingDeps) {}

  /**
   * Loads the runs of `shards` (of every shard, when undefined) into the index, each shard's records
   * in its own order, then settles what a crash left between parents and children.
   *
   * @returns the shards of `shards` whose records could not be loaded, with why: none of their runs
   * is left in the index, and the other shards are loaded all the same.
   * @throws StorageError when `shards` is undefined and a shard's records cannot be loaded.
   *
   * With `read` (an open of every shard of a local log), the index holds the runs `read.recovery`
   * built while the log recovered; only what waited for the open's checks is done here.
   */
  async load(shards: readonly number[] | undefined, read?: OnePassRead): Promise<Map<number, unknown>> {
    const failed = new Map<number, unknown>();
    this.deps.timers.hold();
    try {
      if (read !== undefined) await this.adopt(read.recovery, read.log);
      else if (shards === undefined) for (let shard = 0; shard < this.deps.log.shardCount; shard++) await this.scanShard(shard);
      else {
        // Shards are independent, so the reads of several taken at once overlap. A failed shard is
        // dropped once every read has ended, so no read still under way adds runs to it after.
        const scans = await Promise.allSettled(shards.map((shard) => this.scanShard(shard)));
        scans.forEach((scan, i) => {
          if (scan.status === "rejected") failed.set(shards[i]!, scan.reason);
        });
        for (const shard of failed.keys()) this.deps.forgetShard(shard);
      }
    } finally {
      this.deps.timers.release();
    }
    await this.deps.children.reconcile(shards === undefined ? undefined : new Set(shards.filter((shard) => !failed.has(shard))));
    return failed;
  }

  /**
   * Finishes the index a one-pass open built while the log recovered (see {@link RunRecovery}; the
   * index holds its runs already) with what waited for the open's checks: attributes are decoded,
   * timers armed, the engine's own streams read, superseded streams dropped. A shard the pass left
   * to a scan is scanned.
   */
  private async adopt(recovery: RunRecovery, log: StreamReader): Promise<void> {
    const { index, timers } = this.deps;
    const shards = this.deps.log.shardCount;
    const scans = Array.from({ length: shards }, (_, shard) => recovery.needsScan(shard));
    if (scans.includes(true)) for (const entry of [...index.runs.values()]) if (scans[entry.shard]) index.runs.delete(entry.id);
    recovery.eachAttributes((entry, body, position) => index.decodeAttributes(entry, body, position));
    if (!this.deps.closed()) recovery.eachTimer((until, entry, seq, runId) => timers.add(until, entry, seq, runId));
    for (let shard = 0; shard < shards; shard++) {
      if (scans[shard]) {
        await this.scanShard(shard);
        continue;
      }
      const system = recovery.systemStreams(shard);
      if (system.length > 0) for (const item of log.readStreams(shard, system)) this.deps.flow.recover(shard, item.stream, item.body);
      for (const stream of recovery.supersededOf(shard)) this.deps.records.drop(shard, stream);
      for (const stream of recovery.cutCopies(shard)) this.deps.records.discard(shard, stream);
    }
    recovery.finished();
  }

  private async scanShard(shard: number): Promise<void> {
    const superseded = new Set<string>();
    // A copy an earlier scan of the shard left half read (the scan failed) is read again from its start.
    this.deps.index.cutCopies(shard);
    for await (const batch of this.deps.log.scanBatches(shard)) {
      for (const item of batch) this.deps.index.recover(shard, item, superseded);
    }
    for (const stream of superseded) this.deps.records.drop(shard, stream);
    for (const stream of this.deps.index.cutCopies(shard)) this.deps.records.discard(shard, stream);
  }
}
