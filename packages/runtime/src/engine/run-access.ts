import { RunTable } from "./run-table.js";
import { NotFoundError, RejectedError, ShardMovedError } from "../core/errors.js";
import { shardOf } from "../core/ids.js";
import type { ListFilter, RunStatus } from "../client/types.js";
import { checkFilter } from "../journal/list-filter.js";
import type { Log } from "../storage/log.js";
import type { RunExecutor } from "../workflow/run-executor.js";
import { performedRequest } from "./performed-requests.js";
import type { RunCache } from "./run-cache.js";
import type { RunEntry } from "./run-entry.js";
import type { RunReplacement } from "./run-replacement.js";
import { listRuns, statusOf, stoppedReason } from "./run-status.js";
import type { WorkflowCatalog } from "./workflow-catalog.js";

/** What reaching the runs of a process needs. */
export interface RunAccessDeps {
  readonly runs: RunTable;
  /** Where a run's journal is read to find the requests it performed. */
  readonly log: Log;
  readonly catalog: Pick<WorkflowCatalog, "has">;
  readonly replacement: Pick<RunReplacement, "busy" | "settled">;
  readonly cache: Pick<RunCache, "load">;
  /** Whether this process holds the shard: always, outside a cluster. */
  owns(shard: number): boolean;
}

/**
 * How calls reach the runs of the shards a process holds: refused for a shard it does not hold
 * (its owner performs them), for an ID without a run, for a run that finished or cannot go on; and,
 * for calls that change a run, held while the run is being replaced and performed once per request.
 */
export class RunAccess {
  constructor(private readonly deps: RunAccessDeps) {}

  /** Refuses a call on a run of a shard this process does not hold; the shard's owner performs it. */
  held(id: string): string {
    this.heldShard(shardOf(id, this.deps.log.shardCount));
    return id;
  }

  /** Refuses a call on a shard this process does not hold. */
  heldShard(shard: number): void {
    if (!this.deps.owns(shard)) throw shardMoved(shard);
  }

  /** The entry of `id`'s run, or a `NotFoundError`. */
  entryOf(id: string): RunEntry {
    this.held(id);
    const entry = this.deps.runs.get(id);
    if (entry === undefined) throw new NotFoundError(`no workflow run has the ID '${id}'`);
    return entry;
  }

  /** The entry of `id`'s run, refused when the run finished. */
  unfinished(id: string): RunEntry {
    const entry = this.entryOf(id);
    if (entry.finished !== undefined)
      throw new RejectedError(`run ${entry.runId} of ${id} has already finished (${entry.finished})`, { reason: "already-finished" });
    return entry;
  }

  /** Where the run stands, as `engine.status` tells it. */
  status(entry: RunEntry): RunStatus {
    return statusOf(entry, (type) => this.deps.catalog.has(type));
  }

  /** The runs of the shards `inShard` names that match the filter, newest first, at most `limit`. */
  list(filter: ListFilter, limit: number, inShard: (shard: number) => boolean): RunStatus[] {
    checkFilter(filter);
    return listRuns(this.deps.runs.values(), filter, limit, inShard, (type) => this.deps.catalog.has(type));
  }

  /** Why the run cannot go on, or `undefined` when it can (see `stoppedReason`). */
  stopped(entry: RunEntry): Error | undefined {
    return stoppedReason(entry, (type) => this.deps.catalog.has(type));
  }

  /** Throws why the run cannot go on, when it cannot. */
  assertCanGoOn(entry: RunEntry): void {
    const stopped = this.stopped(entry);
    if (stopped !== undefined) throw stopped;
  }

  /** The run's executor once every record delivered so far has been applied. */
  async idleExecutor(entry: RunEntry): Promise<RunExecutor> {
    const executor = await this.deps.cache.load(entry);
    await executor.whenIdle();
    return executor;
  }

  /**
   * Performs `call` on the entry of `id` once no replacement of its run is under way, calling it in
   * the same turn as that check, so no replacement begins before the records it appends; resolves
   * to `undefined` without calling it when the call performs `request` and the run (or one it
   * replaced) performed it already.
   */
  async onRun<T>(id: string, request: string | undefined, call: (entry: RunEntry) => Promise<T>): Promise<T | undefined> {
    const { replacement, runs, log } = this.deps;
    for (;;) {
      await replacement.settled(id);
      if (replacement.busy(id)) continue;
      const entry = this.entryOf(id);
      if (request !== undefined) {
        const runId = entry.runId;
        const done = await performedRequest(log, entry, request);
        if (replacement.busy(id) || runs.get(id) !== entry || entry.runId !== runId) continue;
        if (done) return undefined;
      }
      return call(entry);
    }
  }

  /** Whether a replacement of the run of `id` (continue-as-new, reset) is under way. */
  replacing(id: string): boolean {
    return this.deps.replacement.busy(id);
  }

  /** Whether the current run of `id` holds a record that request `request` appended, or remembers one from a run it replaced. */
  async performed(id: string, request: string): Promise<boolean> {
    await this.deps.replacement.settled(id);
    const entry = this.deps.runs.get(id);
    return entry !== undefined && performedRequest(this.deps.log, entry, request);
  }
}

/** Refuses a call on a shard this process no longer holds; the shard's next owner performs it. */
function shardMoved(shard: number): ShardMovedError {
  return new ShardMovedError(`shard ${shard} is no longer held by this process; its next owner performs the request`);
}
