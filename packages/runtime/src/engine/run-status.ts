import type { ListFilter, RunStatus } from "../client/types.js";
import { NotFoundError } from "../core/errors.js";
import { isFinished, type RunStatusValue } from "../core/status.js";
import { compileFilter } from "../journal/list-filter.js";
import type { RunEntry } from "./run-entry.js";

/** Where an indexed run stands; `registered` tells whether its workflow type is known here. */
export function statusOf(entry: RunEntry, registered: (type: string) => boolean): RunStatus {
  let status: RunStatusValue;
  let error: string | undefined;
  const stopped = entry.finished === undefined ? stoppedReason(entry, registered) : undefined;
  if (entry.finished !== undefined) status = entry.finished;
  else if (stopped !== undefined) {
    status = "stopped";
    error = stopped.message;
  } else if (entry.executor !== undefined) {
    status = entry.executor.status() as RunStatusValue;
    if (isFinished(status)) status = "running";
  } else status = "parked";
  return {
    id: entry.id,
    type: entry.type,
    runId: entry.runId,
    status,
    startedAt: entry.startedAt,
    ...(entry.endedAt !== undefined ? { endedAt: entry.endedAt } : {}),
    attributes: entry.attributes ?? {},
    ...(error !== undefined ? { error } : {}),
  };
}

/**
 * Why an unfinished run cannot go on, or `undefined` when it can: its executor broke (its code no
 * longer matches its journal, its workflow could not be built), it was found stopped before (and
 * has not been loaded again since), or its workflow type is not registered in this process.
 */
export function stoppedReason(entry: RunEntry, registered: (type: string) => boolean): Error | undefined {
  const executor = entry.executor;
  if (executor !== undefined) return executor.broken;
  if (entry.stopped !== undefined) return entry.stopped;
  if (!registered(entry.type)) return notRegistered(entry);
  return undefined;
}

/** The refusal of a run whose workflow type this process does not know. */
export function notRegistered(entry: RunEntry): NotFoundError {
  return new NotFoundError(
    `workflow type '${entry.type}' of run '${entry.id}' is not registered; pass its class to Engine.open or engine.register`,
  );
}

/** The indexed runs (of one shard, or all) that match the filter, newest first, at most `limit`. */
export function listRuns(
  runs: Iterable<RunEntry>,
  filter: ListFilter,
  limit: number,
  inShard: (shard: number) => boolean,
  registered: (type: string) => boolean,
): RunStatus[] {
  const predicate = compileFilter(filter);
  const out: RunStatus[] = [];
  for (const entry of runs) {
    if (!inShard(entry.shard)) continue;
    const field = (name: string): unknown => entryField(entry, name, () => statusOf(entry, registered).status);
    if (predicate(field)) out.push(statusOf(entry, registered));
  }
  return newestFirst(out, limit);
}

/** The first `limit` runs, most recently started first (ties by ID). */
export function newestFirst(runs: RunStatus[], limit: number): RunStatus[] {
  runs.sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? -1 : 1));
  return runs.slice(0, Math.max(0, limit));
}

/** A field of `listWhere` read straight from an index entry; the status only when asked for. */
function entryField(entry: RunEntry, name: string, status: () => RunStatusValue): unknown {
  switch (name) {
    case "id":
      return entry.id;
    case "type":
      return entry.type;
    case "runId":
      return entry.runId;
    case "status":
      return entry.finished ?? status();
    case "startedAt":
      return entry.startedAt;
    case "endedAt":
      return entry.endedAt;
    default:
      return entry.attributes?.[name];
  }
}
