import type { Log } from "../src/storage/log.js";
import { percentile, round } from "./percentile.js";

/** Appenders hammering a log for a while: records/s, records per sync (or batch), ack latency. */
export interface AppendThroughput {
  readonly appenders: number;
  readonly records_per_s: number;
  readonly records_per_sync: number;
  readonly ack_p50_us: number;
  readonly ack_p99_us: number;
}

export interface AppendThroughputOptions {
  readonly appenders: number;
  /** Appender `i` writes to shard `i % shards`. */
  readonly shards: number;
  readonly recordBytes: number;
  readonly durationMs: number;
  /** Acks timed at most; later ones still count towards records/s. */
  readonly maxSamples: number;
  /** Records each appender hands over per call through `appendAll`; without it, one `append` per record. */
  readonly perCall?: number;
}

/** Runs `appenders` concurrent loops of awaited appends for `durationMs` and reads the log's counters. */
export async function measureAppendThroughput(log: Log, o: AppendThroughputOptions): Promise<AppendThroughput> {
  const body = Buffer.alloc(o.recordBytes, 0x62);
  const samples = new Float64Array(o.maxSamples);
  let count = 0;
  let stop = false;
  const before = log.stats();
  const started = performance.now();
  const timer = setTimeout(() => (stop = true), o.durationMs);
  await Promise.all(
    Array.from({ length: o.appenders }, async (_, i) => {
      const entry = { stream: `run-${o.appenders}-${i}`, body };
      const shard = i % o.shards;
      const batch =
        o.perCall === undefined ? undefined : Array.from({ length: o.perCall }, (_, k) => ({ stream: `${entry.stream}-${k}`, body }));
      while (!stop) {
        const t0 = performance.now();
        if (batch === undefined) await log.append(shard, entry);
        else await log.appendAll(shard, batch);
        if (count < samples.length) samples[count++] = (performance.now() - t0) * 1000;
      }
    }),
  );
  clearTimeout(timer);
  const seconds = (performance.now() - started) / 1000;
  const after = log.stats();
  const appended = sum(after.appended) - sum(before.appended);
  const syncs = sum(after.syncs) - sum(before.syncs);
  return {
    appenders: o.appenders,
    records_per_s: Math.round(appended / seconds),
    records_per_sync: round(appended / Math.max(1, syncs)),
    ack_p50_us: round(percentile(samples, count, 0.5)),
    ack_p99_us: round(percentile(samples, count, 0.99)),
  };
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
