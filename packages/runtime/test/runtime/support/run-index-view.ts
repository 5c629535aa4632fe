import type { Engine } from "../../../src/engine/engine.js";
import type { RunEntry } from "../../../src/engine/run-entry.js";
import type { TimerQueue } from "../../../src/engine/timer-queue.js";

/** The engine's index of runs and its durable timers, which the tests of how an open builds them compare. */
export interface RunIndexView {
  readonly runs: Map<string, RunEntry>;
  /** Each indexed run's pending timers as `[call number, due time]`, by call number. */
  readonly timers: Map<RunEntry, [number, number][]>;
}

/** Reads what an open engine holds of its runs: the entries, and the queued timers still pending for them. */
export function runIndexOf(engine: Engine): RunIndexView {
  const local = (engine as unknown as { parts: { local: { runs: Map<string, RunEntry>; parts: { timers: TimerQueue<RunEntry> } } } }).parts
    .local;
  const timers = new Map<RunEntry, [number, number][]>();
  // The queue keeps timers that fired or whose run ended until they come due; only pending ones count.
  local.parts.timers.forEach((at, entry, seq, runId) => {
    if (local.runs.get(entry.id) !== entry || (entry.runId | 0) !== runId || !entry.hasTimer(seq)) return;
    let list = timers.get(entry);
    if (list === undefined) timers.set(entry, (list = []));
    list.push([seq, at]);
  });
  for (const list of timers.values()) list.sort((a, b) => a[0] - b[0]);
  return { runs: local.runs, timers };
}
