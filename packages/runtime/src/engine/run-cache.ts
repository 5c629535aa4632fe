import type { DependencyContainer } from "tsyringe";
import type { JournalRecord } from "../journal/records.js";
import { RunExecutor } from "../workflow/run-executor.js";
import type { WorkflowDefinition } from "../workflow/registry.js";
import type { RunEntry } from "./run-entry.js";
import { notRegistered } from "./run-status.js";
import { EngineRunHost, type RunHostEngine } from "./run-host.js";
import type { WorkflowCatalog } from "./workflow-catalog.js";

// Runs resumed at once after open; the rest wait their turn so a large backlog cannot flood memory.
const RESUME_CONCURRENCY = 64;

/** What keeping executors in memory needs of the runs around it. */
export interface RunCacheDeps {
  readonly catalog: WorkflowCatalog;
  readonly container: DependencyContainer;
  /** Most runs kept in memory while they only wait (`Config.cache`). */
  readonly size: number;
  /** What every run's host asks of the engine. */
  readonly host: RunHostEngine;
  /** The first `upTo` records of the run's journal. */
  read(entry: RunEntry, upTo: number): Promise<JournalRecord[]>;
  closed(): boolean;
  /** The run's journal could not be read into an executor (a key is missing, storage failed). */
  unloadable(entry: RunEntry, error: unknown): void;
}

/**
 * The executors of runs in memory, least recently used first. A run that only waits is parked
 * (its executor dropped) once more than `size` are in memory, and replayed from its journal when
 * something needs it; unfinished runs are resumed after an open a bounded number at a time.
 */
export class RunCache {
  private readonly live = new Map<string, RunEntry>();
  /**
   * Runs whose journal is being replayed into `executor`, kept here rather than in every index
   * entry: few runs load at a time. A load is the entry's while that executor is.
   */
  private readonly loads = new Map<RunEntry, { executor: RunExecutor; done: Promise<RunExecutor> }>();
  private resumeQueue: RunEntry[] = [];
  private resuming = 0;
  /**
   * Set when the cache is over its size and a scan found no run to park (every run in memory is
   * busy); cleared once a run comes to wait. Without it, every record of every busy run would scan
   * all of them again: with more runs at work than the cache holds, a quadratic cost.
   */
  private noneIdle = false;

  constructor(private readonly deps: RunCacheDeps) {}

  get size(): number {
    return this.live.size;
  }

  /** Runs in memory. */
  entries(): IterableIterator<RunEntry> {
    return this.live.values();
  }

  /** Whether runs are waiting to be resumed, or being resumed. */
  get resumingRuns(): boolean {
    return this.resuming > 0 || this.resumeQueue.length > 0;
  }

  /** A new executor for the entry's current run, in memory from now on. */
  create(entry: RunEntry, def: WorkflowDefinition): RunExecutor {
    const host = new EngineRunHost(this.deps.host, entry, entry.runId, def);
    const executor = new RunExecutor(def, this.deps.container, host);
    host.executor = executor;
    entry.executor = executor;
    this.touch(entry);
    return executor;
  }

  /** The run's executor, replaying its journal from the log when it is parked. */
  load(entry: RunEntry): Promise<RunExecutor> {
    if (entry.executor !== undefined) {
      const loading = this.loads.size === 0 ? undefined : this.loads.get(entry);
      if (loading !== undefined && loading.executor === entry.executor) return loading.done;
      this.touch(entry);
      return Promise.resolve(entry.executor);
    }
    const def = this.deps.catalog.get(entry.type);
    if (def === undefined) return Promise.reject(notRegistered(entry));
    const reacted = entry.reacted;
    const executor = this.create(entry, def);
    const upTo = entry.durable;
    const runId = entry.runId;
    const done = (async () => {
      try {
        const records = await this.deps.read(entry, upTo);
        if (entry.runId !== runId) return executor;
        executor.load(records, reacted);
        return executor;
      } catch (e) {
        if (entry.executor === executor) {
          this.evict(entry);
          entry.park(reacted);
          this.deps.unloadable(entry, e);
        }
        throw e;
      } finally {
        if (this.loads.get(entry)?.executor === executor) this.loads.delete(entry);
        // The load told its change while still loading: a run it left waiting may be parked now.
        if (this.noneIdle && this.idle(entry)) this.noneIdle = false;
      }
    })();
    this.loads.set(entry, { executor, done });
    return done;
  }

  /** Whether the run's journal is being replayed into an executor. */
  loading(entry: RunEntry): boolean {
    return this.loads.size !== 0 && this.loads.has(entry);
  }

  /**
   * Drops the run's executor; the steps it still runs are aborted with `stop()` (their run ended or
   * was replaced), made only when there are any: a run's end is a hot path.
   */
  evict(entry: RunEntry, stop?: () => Error): void {
    if (stop !== undefined && entry.executor?.runsSteps === true) entry.executor.abortSteps(stop());
    entry.executor = undefined;
    this.live.delete(entry.id);
    this.pumpResume();
  }

  /** Drops every executor at once (shutdown, a shard lost), aborting their steps with `reason`. */
  dropAll(reason: Error, which: (entry: RunEntry) => boolean = () => true): void {
    for (const entry of [...this.live.values()]) {
      if (!which(entry)) continue;
      entry.executor?.abortSteps(reason);
      entry.executor = undefined;
      this.live.delete(entry.id);
    }
    this.resumeQueue = this.resumeQueue.filter((entry) => !which(entry));
  }

  /** The executor of `entry` changed state: idle runs over the cache's size are parked, waiting runs resume. */
  changed(entry: RunEntry): void {
    if (this.noneIdle && this.idle(entry)) this.noneIdle = false;
    this.parkIdle();
    // A run that came to wait may make room for one waiting to resume.
    if (this.resumeQueue.length > 0) this.pumpResume();
  }

  /** Resumes the unfinished runs among `entries` whose types are registered, a bounded number at a time. */
  resume(entries: Iterable<RunEntry>): void {
    this.resumeQueue = [];
    for (const entry of entries) {
      if (entry.finished === undefined && entry.executor === undefined && this.deps.catalog.has(entry.type)) this.resumeQueue.push(entry);
    }
    this.pumpResume();
  }

  private touch(entry: RunEntry): void {
    this.live.delete(entry.id);
    this.live.set(entry.id, entry);
    if (this.noneIdle && this.idle(entry)) this.noneIdle = false;
    if (this.live.size > this.deps.size) this.parkIdle();
  }

  /** Parks least recently used runs that are only waiting, until the cache fits. */
  private parkIdle(): void {
    if (this.live.size <= this.deps.size || this.noneIdle) return;
    while (this.live.size > this.deps.size && this.parkOneIdle());
    if (this.live.size > this.deps.size) this.noneIdle = true;
    this.pumpResume();
  }

  /** Whether the run only waits, with nothing of it in flight: it may be parked. */
  private idle(entry: RunEntry): boolean {
    const ex = entry.executor;
    return ex !== undefined && !this.loading(entry) && entry.durable === entry.appended && ex.status() === "suspended";
  }

  /**
   * Parks the least recently used run that is only waiting; false when no live run is. The most
   * recently used is kept: it was loaded for a caller that is about to use it, and parking it under
   * runs whose steps keep them in memory would load it again and again.
   */
  private parkOneIdle(): boolean {
    let left = this.live.size - 1;
    for (const entry of this.live.values()) {
      if (left-- === 0) return false;
      if (this.idle(entry)) {
        entry.park(entry.durable);
        this.live.delete(entry.id);
        return true;
      }
    }
    return false;
  }

  private pumpResume(): void {
    // The cache bounds the runs kept while they wait, not those with work to do: a run resumes even
    // when the cache is full (of runs whose steps run), and is parked again once it waits.
    while (!this.deps.closed() && this.resuming < RESUME_CONCURRENCY && this.resumeQueue.length > 0) {
      const entry = this.resumeQueue.shift() as RunEntry;
      if (entry.finished !== undefined || entry.executor !== undefined) continue;
      this.resuming++;
      // A run that cannot be loaded is reported by `load` itself (`unloadable`); the others go on.
      this.load(entry)
        .then((ex) => ex.whenIdle())
        .catch(() => undefined)
        .finally(() => {
          this.resuming--;
          this.pumpResume();
        });
    }
  }
}
