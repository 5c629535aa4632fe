import { RunTable } from "./run-table.js";
import type { Clock } from "../core/clock.js";
import { CancelledError, CodecError, FuseeError, RejectedError, TerminatedError } from "../core/errors.js";
import { readBackRecord, type PayloadCodec } from "../journal/record-codec.js";
import { wakesRun } from "../journal/record-kinds.js";
import type { FinishRecord, JournalRecord } from "../journal/records.js";
import type { RunExecutor } from "../workflow/run-executor.js";
import type { ChildRuns } from "./child-runs.js";
import { type EngineEvent, runStopped } from "./engine-events.js";
import { noteRequest } from "./performed-requests.js";
import type { RunCache } from "./run-cache.js";
import type { RunEntry } from "./run-entry.js";
import type { RunIndex } from "./run-index.js";
import type { RunRecords } from "./run-records.js";
import type { RunReplacement } from "./run-replacement.js";
import type { RunRequests } from "./run-requests.js";
import type { RunTelemetry } from "./run-telemetry.js";
import type { RunsState } from "./runs-state.js";
import { Waiters } from "./waiters.js";

/** What following runs through their durable records needs. */
export interface DurableRunsDeps {
  readonly state: RunsState;
  readonly runs: RunTable;
  readonly index: Pick<RunIndex, "apply">;
  readonly records: Pick<RunRecords, "append">;
  readonly cache: Pick<RunCache, "load" | "evict" | "changed">;
  readonly requests: Pick<RunRequests, "resolve" | "finished">;
  readonly children: Pick<ChildRuns, "parentEnded">;
  readonly replacement: Pick<RunReplacement, "busy">;
  readonly codec: PayloadCodec;
  readonly clock: Clock;
  readonly telemetry: RunTelemetry | undefined;
  emit(event: EngineEvent): void;
  /** A record the engine appended on its own could not be made durable. */
  storageFailed(error: unknown, shard: number): void;
}

/**
 * What becomes of runs as their records become durable: each record applied to the run's index
 * entry and executor (or waking the parked run it concerns), a run's end told to whoever waits for
 * its result, its updates and its parent; a run that cannot go on stopped, and journaled so; a run
 * found stopped that goes on again; timers that fire.
 */
export class DurableRuns {
  /** Callers waiting for a run's end, by workflow ID. */
  readonly results = new Waiters<string, FinishRecord>();
  /** Executors whose breaking was reported, so a run stopped is told once per load. */
  private readonly reported = new WeakSet<RunExecutor>();

  constructor(private readonly deps: DurableRunsDeps) {}

  /** Applies a record of `entry`'s run `runId` that just became durable at `position`. */
  durable(entry: RunEntry, runId: number, position: number, record: JournalRecord, body: Uint8Array): void {
    const { requests } = this.deps;
    if (entry.runId !== runId) {
      // An update's outcome journaled by a run replaced meanwhile still answers its caller: the run
      // that replaced it remembers the outcome (or, after a crash, replays it from this record).
      if (record.kind === "update-result") requests.resolve(entry.id, record);
      return;
    }
    entry.durable = position + 1;
    // Workflow code sees exactly what a replay would: the record as read back, not the live objects.
    record = readBackRecord(record, body, this.deps.codec, { workflowId: entry.id, runId, position });
    this.deps.index.apply(entry, record);
    noteRequest(entry, record);
    this.deps.telemetry?.recorded(entry, record);
    if (entry.executor !== undefined) entry.executor.deliver(position, record);
    // A parked run wakes once the last of its pending records is durable, so its replay sees them all;
    // one being replaced is loaded by the replacement once it is over.
    else if (entry.finished === undefined && wakesRun(record) && entry.durable === entry.appended && !this.deps.replacement.busy(entry.id))
      // A run that cannot be loaded is reported by the cache itself (`unloadable`).
      this.deps.cache.load(entry).catch(() => undefined);
    if (record.kind === "finish") this.finished(entry, record);
    else if (record.kind === "update-result") requests.resolve(entry.id, record);
  }

  /** The run's executor changed state (idle, finished, broken): a broken run stops, a mended one goes on. */
  executorChanged(entry: RunEntry, executor: RunExecutor): void {
    if (entry.executor !== executor) return;
    const broken = executor.broken;
    if (broken) {
      if (!this.reported.has(executor)) {
        this.reported.add(executor);
        this.stop(entry, broken);
      }
    } else if (entry.stopped !== undefined && !executor.replaying && executor.instance !== undefined) this.resume(entry);
    if (this.deps.telemetry !== undefined && executor.status() !== "running") this.deps.telemetry.idle(entry);
    this.deps.cache.changed(entry);
  }

  /** A run's journal could not be read into an executor: a missing key stops the run; a storage failure is the storage's. */
  unloadable(entry: RunEntry, error: unknown): void {
    if (error instanceof CodecError) this.stop(entry, error);
  }

  /** The run's run `runId` could not continue as new: it ends failed with why. */
  failedToContinue(entry: RunEntry, runId: number, e: unknown): void {
    if (entry.runId !== runId || entry.finished !== undefined || this.deps.state.closed) return;
    const error = e instanceof Error ? e : new FuseeError(String(e));
    this.appendOwn(entry, { kind: "finish", status: "failed", error, at: this.deps.clock.now() });
  }

  /**
   * Timers cancelled, of an earlier run of the ID, or of an entry no longer indexed (its shard moved,
   * its retention passed) stay queued: only a pending timer of the current run fires.
   */
  fireTimer(entry: RunEntry, seq: number, runId: number): void {
    if ((entry.runId | 0) !== runId || this.deps.runs.get(entry.id) !== entry || !entry.hasTimer(seq) || this.deps.state.closed) return;
    entry.clearTimer(seq);
    this.appendOwn(entry, { kind: "fired", seq, at: this.deps.clock.now() });
  }

  /**
   * A record the engine appended on its own (a timer fired, a child started, a result) failed: a run
   * that finished meanwhile refuses it, which is no failure; anything else is the storage's.
   */
  appendFailed(e: unknown, shard: number): void {
    if (!(e instanceof RejectedError)) this.deps.storageFailed(e, shard);
  }

  private finished(entry: RunEntry, record: FinishRecord): void {
    const unanswered = entry.executor?.unansweredUpdates() ?? [];
    this.deps.cache.evict(entry, () =>
      record.error instanceof TerminatedError
        ? record.error
        : new CancelledError(`run ${entry.runId} of '${entry.id}' ended (${record.status}); its steps stop`),
    );
    this.results.resolve(entry.id, record);
    this.deps.requests.finished(entry, unanswered);
    this.deps.children.parentEnded(entry, record);
  }

  /**
   * The run cannot go on: callers waiting for its result hear why, operators are told, and the
   * reason is journaled once, so readers of the data directory see the run stopped too.
   */
  private stop(entry: RunEntry, reason: Error): void {
    if (entry.finished !== undefined || this.deps.state.closed) return;
    this.results.reject(entry.id, reason);
    this.deps.emit(runStopped(entry, reason));
    if (entry.stopped?.message === reason.message) return;
    entry.stopped = reason;
    const code = reason instanceof FuseeError ? reason.code : "FUSEE_ERROR";
    this.appendOwn(entry, { kind: "stopped", at: this.deps.clock.now(), code, message: reason.message });
  }

  /** A run found stopped went on (its code, registration or key was mended): journaled, so readers see it go on. */
  private resume(entry: RunEntry): void {
    entry.stopped = undefined;
    this.appendOwn(entry, { kind: "resumed", at: this.deps.clock.now() });
  }

  private appendOwn(entry: RunEntry, record: JournalRecord): void {
    void this.deps.records.append(entry, record).catch((e: unknown) => this.appendFailed(e, entry.shard));
  }
}
