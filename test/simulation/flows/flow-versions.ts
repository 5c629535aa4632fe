import { NonDeterminismError, type Engine, type RunStatus } from "@fusee/runtime";
import type { EngineLife } from "./flow-engine.js";
import { FTICK } from "./flow-plan.js";
import type { FlowProperty } from "./flow-properties.js";
import { PATCH_HOLD, PATCH_TAIL } from "./flow-workflows.js";

/** A run of the versioned workflow: whether its start was acknowledged, and when. */
export interface VersionedRun {
  readonly acked: boolean;
  readonly startedAt: number;
}

/** How a versioned run can end: ok with the path it took, or stopped (its journal no longer matches the code). */
type Ending = "v1" | "v2" | "stopped";

/**
 * The engines that may fire a timer due at `t`, and when: the engine up at `t`; the next one, at its
 * open, when none was up; both when `t` falls in the tick an engine stopped in mid-work (the fire
 * may not have been durable).
 */
function firings(t: number, lives: readonly EngineLife[]): Array<{ readonly n: number; readonly at: number }> {
  for (let i = 0; i < lives.length; i++) {
    const life = lives[i] as EngineLife;
    if (t < life.openedAt) return [{ n: life.n, at: life.openedAt }];
    const stop = life.stoppedAt ?? Infinity;
    if (t > stop) continue;
    const next = lives[i + 1];
    if (!life.clean && next !== undefined && t > stop - FTICK)
      return [
        { n: life.n, at: t },
        { n: next.n, at: next.openedAt },
      ];
    return [{ n: life.n, at: t }];
  }
  return [];
}

/**
 * How a run started at `startedAt` can end, from the engines' lives and the version each ran. Its
 * first wait ends at the patched point: under the first version it keeps the old path (no patch
 * record); under the second it takes the new one and journals the patch; under the third,
 * `deprecatePatch` journals nothing and the new path runs. The second wait ends it. A run on the old
 * path that an engine of the third version replays no longer matches its journal (the new path's
 * step where the journal holds the old one's): as `deprecatePatch` is documented to replay runs
 * with and without the record alike, it stops with a `NonDeterminismError`, which is the user's
 * mistake of deprecating too early. A run holding the record replays under the third version.
 */
export function versionEndings(startedAt: number, lives: readonly EngineLife[], version: (n: number) => 1 | 2 | 3): Set<Ending> {
  const endings = new Set<Ending>();
  for (const point of firings(startedAt + PATCH_HOLD, lives)) {
    if (version(point.n) !== 1) {
      endings.add("v2");
      continue;
    }
    for (const end of firings(point.at + PATCH_TAIL, lives)) endings.add(version(end.n) === 3 ? "stopped" : "v1");
  }
  return endings;
}

/**
 * At the end of a plan: each acknowledged versioned run ended as the model says; a stopped one
 * says why, and its `result()` fails at once with `NonDeterminismError`.
 */
export async function checkVersions(
  engine: Engine,
  statuses: ReadonlyMap<string, RunStatus>,
  runs: ReadonlyMap<string, VersionedRun>,
  lives: readonly EngineLife[],
  version: (n: number) => 1 | 2 | 3,
  violate: (p: FlowProperty, detail: string) => void,
): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  for (const [id, run] of runs) {
    if (!run.acked) continue;
    const expected = versionEndings(run.startedAt, lives, version);
    const want = [...expected].join(" or ");
    const s = statuses.get(id);
    const ending = s?.status === "ok" ? String(await engine.run(id).result()) : (s?.status ?? "missing");
    seen[ending] = (seen[ending] ?? 0) + 1;
    if (s?.status === "stopped") {
      if (!expected.has("stopped"))
        violate("patches", `${id} (started at ${run.startedAt}) stopped (${s.error ?? "no reason"}); the model expects ${want}`);
      else if (s.error === undefined || !s.error.includes("does not match its journal"))
        violate("patches", `${id} stopped with the reason ${JSON.stringify(s.error)}; the model expects its journal's difference`);
      const got = await engine
        .run(id)
        .result()
        .then(
          (v: unknown) => ({ ok: true as const, v }),
          (e: unknown) => ({ ok: false as const, e }),
        );
      if (got.ok || !(got.e instanceof NonDeterminismError))
        violate(
          "patches",
          `result() of the stopped run ${id} ${got.ok ? `returned ${JSON.stringify(got.v)}` : `threw ${String(got.e)}`}; the model expects a NonDeterminismError`,
        );
      continue;
    }
    if (s?.status !== "ok") {
      violate("patches", `${id} (started at ${run.startedAt}) is ${s?.status ?? "missing"}; the model expects ${want}`);
      continue;
    }
    const got = await engine.run(id).result();
    if (!expected.has(got as Ending))
      violate("patches", `${id} (started at ${run.startedAt}) returned ${JSON.stringify(got)}; the model expects ${want}`);
  }
  return seen;
}
