import type { JournalRecord } from "../journal/records.js";
import type { AppendWaiter } from "../storage/log.js";
import type { RunEntry } from "./run-entry.js";

/** What the engine does with a run's record once the log has it durable, or could not make it so. */
export interface DurableSink {
  /** Applies record `position` of `entry`'s run `runId` (its index entry, its executor). */
  durable(entry: RunEntry, runId: number, position: number, record: JournalRecord, body: Uint8Array): void;
  /** Stops the engine (or, in a cluster, the shard) after a storage failure. */
  failed(error: unknown, shard: number): void;
}

/**
 * One appended record of a run, waiting to become durable. The same object carries the record to
 * the engine on success, so an append allocates this and nothing else (no promise, no closures);
 * `resolve` and `reject` are set only for callers that await the append.
 */
export class RecordWaiter implements AppendWaiter {
  constructor(
    private readonly sink: DurableSink,
    private readonly entry: RunEntry,
    private readonly runId: number,
    private readonly position: number,
    private readonly record: JournalRecord,
    private readonly body: Uint8Array,
    private readonly resolve?: () => void,
    private readonly reject?: (error: unknown) => void,
  ) {}

  appended(): void {
    try {
      this.sink.durable(this.entry, this.runId, this.position, this.record, this.body);
    } catch (e) {
      this.failed(e);
      return;
    }
    this.resolve?.();
  }

  /** The caller awaiting the append hears the error; the engine stops either way, as the shard has. */
  failed(error: unknown): void {
    this.reject?.(error);
    this.sink.failed(error, this.entry.shard);
  }
}
