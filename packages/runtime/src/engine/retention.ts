import { RunTable } from "./run-table.js";
import type { Clock } from "../core/clock.js";
import type { Log } from "../storage/log.js";
import { parseStream } from "../journal/stream-names.js";
import type { RunEntry } from "./run-entry.js";

/** What the retention sweep needs of the engine. */
export interface RetentionDeps {
  readonly log: Log;
  readonly clock: Clock;
  readonly runs: RunTable;
  readonly retentionMs: number;
  /** Whether this process holds the shard (always, outside a cluster). */
  owns(shard: number): boolean;
  /** Whether the run's journal is being replayed into an executor. */
  loading(entry: RunEntry): boolean;
  /** A sweep failed on storage. */
  failed(error: unknown): void;
  /** Forgets the engine's own state that ended at or before `cutoff` (fired debounce and batch windows). */
  sweepEngineState(cutoff: number): Promise<void>;
}

/**
 * Forgets finished runs whose retention has passed: they leave the index, their journals (and any
 * kept earlier runs of the same ID) are dropped, and compaction reclaims the space. Debounce and
 * batch keys whose windows all fired before the same cutoff go too. Checks at a tenth of the
 * retention period (1 s to 1 min).
 */
export class RetentionSweep {
  private timer: { cancel(): void } | undefined;
  private stopped = false;

  constructor(private readonly deps: RetentionDeps) {}

  start(): void {
    if (this.stopped) return;
    const retention = this.deps.retentionMs;
    const every = Math.min(60_000, Math.max(1, Math.min(1_000, retention), retention / 10));
    this.timer = this.deps.clock.schedule(every, () => {
      void this.sweep()
        .catch((e: unknown) => this.deps.failed(e))
        .finally(() => this.start());
    });
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private async sweep(): Promise<void> {
    const { log, runs } = this.deps;
    const cutoff = this.deps.clock.now() - this.deps.retentionMs;
    await this.deps.sweepEngineState(cutoff);
    const expired = new Set<string>();
    const dropped = Array.from({ length: log.shardCount }, () => settler());
    for (const entry of runs.values()) {
      if (entry.finished !== undefined && (entry.endedAt ?? 0) <= cutoff && entry.executor === undefined && !this.deps.loading(entry)) {
        expired.add(entry.id);
        runs.delete(entry.id);
        runs.retire(entry.id, (dropped[entry.shard] as Settler).promise);
      }
    }
    try {
      if (expired.size === 0) return;
      for (let shard = 0; shard < log.shardCount; shard++) {
        if (!this.deps.owns(shard)) continue;
        const streams = log.streams(shard).filter((stream) => {
          const run = parseStream(stream);
          return run !== undefined && expired.has(run.id);
        });
        if (streams.length === 0) continue;
        try {
          await log.drop(shard, streams);
          (dropped[shard] as Settler).resolve();
          await log.compact(shard);
        } catch (e) {
          // A shard this process of a cluster lost meanwhile is swept by its new owner.
          if (this.deps.owns(shard)) throw e;
        }
      }
    } finally {
      for (const d of dropped) d.resolve();
    }
  }
}

interface Settler {
  readonly promise: Promise<void>;
  resolve(): void;
}

function settler(): Settler {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
