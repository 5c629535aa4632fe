import type { LocalLog } from "./local-log.js";

/**
 * Recovery cut a shard of the data directory while opening it: a write torn by a crash (never
 * acknowledged), or, with `Config.local(dir).repair()`, corruption and everything after it.
 */
export interface RecoveryCutEvent {
  readonly kind: "recovery-cut";
  readonly shard: number;
  /** Path of the segment file that was cut. */
  readonly segment: string;
  /** Offset of the first byte not kept. */
  readonly offset: number;
  /** Bytes that held data and were discarded, in this segment and, for a repair, the segments after it. */
  readonly discardedBytes: number;
  /** What was found there, in words. */
  readonly reason: string;
}

/** The cuts a local log's recovery made (or, read-only, left out) as events. */
export function recoveryCuts(log: LocalLog): RecoveryCutEvent[] {
  return log.recovery
    .filter((e) => e.kind !== "incomplete-tail")
    .map((e) => ({
      kind: "recovery-cut",
      shard: e.shard,
      segment: e.segment,
      offset: e.offset,
      discardedBytes: e.discardedBytes,
      reason: e.kind === "repaired" ? `cut by repair: ${e.reason}` : e.reason,
    }));
}
