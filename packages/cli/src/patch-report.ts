import type { DataDirReader, DataDirRun } from "@fusee/runtime";

/**
 * What the code of a patch must still hold, weakest last:
 * - `patched-and-old-path`: `if (ctx.patched(id))` with both branches; live runs may replay the old path.
 * - `deprecate-patch`: the new path alone behind `ctx.deprecatePatch(id)`; live runs hold the record.
 * - `nothing`: no live run needs the call; it can go.
 */
export type PatchNeed = "patched-and-old-path" | "deprecate-patch" | "nothing";

/** One patch ID of one workflow type, as the runs of a data directory see it. */
export interface PatchUse {
  readonly id: string;
  /** The earliest record of this patch among the type's runs, in ms since the epoch. */
  readonly firstRecordedAt: number;
  /** Unfinished runs whose journal holds the patch record. */
  readonly liveWithPatch: number;
  /** Unfinished runs without the record that started before `firstRecordedAt`. */
  readonly liveMaybeOldPath: number;
  /** The workflow IDs of those runs, oldest first. */
  readonly maybeOldPathRuns: readonly string[];
  /** Finished runs whose journal holds the record; the engine never replays them. */
  readonly finishedWithPatch: number;
  readonly need: PatchNeed;
}

/** The runs of one workflow type and the patches they recorded. */
export interface TypePatches {
  readonly type: string;
  readonly live: number;
  readonly finished: number;
  /** When the oldest unfinished run started, in ms since the epoch. */
  readonly oldestLiveStartedAt?: number;
  /** Patch IDs that at least one run of the type recorded, by ID. */
  readonly patches: readonly PatchUse[];
}

/**
 * Which patches the unfinished runs of a data directory still need, by workflow type.
 *
 * A run that recorded a patch replays `ctx.patched(id)` as true and consumes the record, so the call
 * must stay while such a run lives. A run without the record that started before the patch was
 * first recorded may have passed that point on older code, and replays the old path.
 */
export function patchReport(reader: DataDirReader): TypePatches[] {
  const byType = new Map<string, DataDirRun[]>();
  for (const run of reader.list({}, Number.POSITIVE_INFINITY)) {
    const runs = byType.get(run.type) ?? [];
    runs.push(run);
    byType.set(run.type, runs);
  }
  return [...byType.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([type, runs]) => typePatches(reader, type, runs));
}

function typePatches(reader: DataDirReader, type: string, runs: readonly DataDirRun[]): TypePatches {
  const recorded = new Map<string, Set<string>>();
  const firstAt = new Map<string, number>();
  for (const run of runs) {
    for (const patch of reader.patches(run.id) ?? []) {
      const holders = recorded.get(patch.id) ?? new Set<string>();
      holders.add(run.id);
      recorded.set(patch.id, holders);
      firstAt.set(patch.id, Math.min(firstAt.get(patch.id) ?? Number.POSITIVE_INFINITY, patch.at));
    }
  }
  const live = runs.filter((r) => r.status === "running").sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1));
  const patches = [...recorded.keys()].sort().map((id): PatchUse => {
    const holders = recorded.get(id) ?? new Set<string>();
    const since = firstAt.get(id) ?? Number.POSITIVE_INFINITY;
    const liveWithPatch = live.filter((r) => holders.has(r.id)).length;
    const maybeOldPathRuns = live.filter((r) => !holders.has(r.id) && r.startedAt < since).map((r) => r.id);
    return {
      id,
      firstRecordedAt: since,
      liveWithPatch,
      liveMaybeOldPath: maybeOldPathRuns.length,
      maybeOldPathRuns,
      finishedWithPatch: holders.size - liveWithPatch,
      need: maybeOldPathRuns.length > 0 ? "patched-and-old-path" : liveWithPatch > 0 ? "deprecate-patch" : "nothing",
    };
  });
  return {
    type,
    live: live.length,
    finished: runs.length - live.length,
    ...(live[0] === undefined ? {} : { oldestLiveStartedAt: live[0].startedAt }),
    patches,
  };
}
