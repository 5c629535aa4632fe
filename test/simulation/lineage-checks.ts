import { isDeepStrictEqual } from "node:util";
import type { Engine, ListFilter, RunDetail, RunStatus } from "@fusee/runtime";
import { DataDirReader } from "@fusee/runtime/replay";
import type { Model } from "./model.js";
import { START_TIME, type Program } from "./program.js";
import type { Property } from "./properties.js";
import type { MemoryFileLayer } from "./sim-disk.js";

type Violate = (property: Property, detail: string) => void;

const FINISHED = ["ok", "failed", "cancelled", "terminated"];

/**
 * Close policies, at the journal: a child whose parent's run ended or was replaced (continued as
 * new, reset to a step after the child's start, replaced by a new start) does not go on running
 * under `terminate`, and has been asked to cancel under `request-cancel`. A child that a reset kept
 * (started before the step it was reset to) reports to the new run, whose journal holds its start.
 */
export function checkClosePolicies(details: ReadonlyMap<string, RunDetail>, violate: Violate): void {
  for (const [id, d] of details) {
    const start = d.journal[0];
    if (start?.kind !== "start" || start.parent === undefined || FINISHED.includes(d.status) || d.status === "stopped") continue;
    const close = (start.input as Program | undefined)?.close;
    if (close === undefined || close === "abandon") continue;
    const parent = details.get(start.parent.id);
    if (parent === undefined) continue;
    let gone: string | undefined;
    // A run of the child that a client's reset started is the client's: the parent's run may have
    // ended and closed the run before it, and the journals shown do not tell which came first.
    if (start.from?.reason === "reset") continue;
    if (parent.runId === start.parent.runId) {
      if (FINISHED.includes(parent.status)) gone = `ended ${parent.status}`;
    } else {
      const first = parent.journal[0];
      const from = first?.kind === "start" ? first.from : undefined;
      const kept = from?.reason === "reset" && parent.journal.some((r) => r.kind === "child" && r.childId === id);
      if (!kept) gone = `was replaced by run ${parent.runId}${from === undefined ? "" : ` (${from.reason})`}`;
    }
    if (gone === undefined) continue;
    if (close === "terminate")
      violate(
        "closePolicy",
        `${id} (close: terminate) is ${d.status} though run ${start.parent.runId} of its parent ${start.parent.id} ${gone}`,
      );
    else if (!d.journal.some((r) => r.kind === "cancel") && !(start.carried?.messages ?? []).some((m) => m.kind === "cancel"))
      violate(
        "closePolicy",
        `${id} (close: request-cancel) was never asked to cancel though run ${start.parent.runId} of its parent ${start.parent.id} ${gone}`,
      );
  }
}

/**
 * Children's results, at the journal: a run holds the result of a child only if it holds that
 * child's start under the same sequence number, so a result never reaches a run of the parent's ID
 * that did not start the child (one that continued as new, or a reset to a step before the start).
 */
export function checkChildResults(details: ReadonlyMap<string, RunDetail>, violate: Violate): void {
  for (const [id, d] of details) {
    // A quick child's result may be journaled before the start that its parent journals.
    const started = new Set(d.journal.flatMap((r) => (r.kind === "child" ? [`${r.seq}:${r.childId}`] : [])));
    for (const r of d.journal) {
      if (r.kind === "child-result" && !started.has(`${r.seq}:${r.childId}`))
        violate("childResults", `run ${d.runId} of ${id} holds the result of ${r.childId} (#${r.seq}), a child it did not start`);
    }
  }
}

/** A run as a `listWhere` filter reads it; the model knows no start times, and no more of a running run than that it runs. */
interface Listed {
  readonly attrs: Readonly<Record<string, unknown>>;
  readonly type: string;
  readonly status: string;
  readonly startedAt?: number;
  readonly endedAt?: number;
}

const has = (a: Readonly<Record<string, unknown>>, field: string, v: string): boolean => {
  const list = a[field];
  return Array.isArray(list) && list.includes(v);
};
const T = (ms: number): number => START_TIME + ms;

/**
 * The `listWhere` filters the checks ask, each with the model's own reading of it over a run's
 * attributes, type, status and times: `ne` holds for a run without the attribute, `in` and the
 * orderings only for a run that has it (the tag is a string, compared as one), `has` only for a list
 * that holds the value, and a time only for a run that has it (a running run has no end).
 * `model: false`: the model cannot read it (start times; a running run's status).
 */
const FILTERS: ReadonlyArray<{ readonly filter: ListFilter; readonly holds: (r: Listed) => boolean; readonly model?: false }> = [
  { filter: { tag: "p" }, holds: (r) => r.attrs["tag"] === "p" },
  { filter: { tag: "q" }, holds: (r) => r.attrs["tag"] === "q" },
  { filter: { tag: { ne: "p" } }, holds: (r) => r.attrs["tag"] !== "p" },
  { filter: { tag: { in: ["p", "q"] } }, holds: (r) => r.attrs["tag"] === "p" || r.attrs["tag"] === "q" },
  { filter: { tag: { gt: "p" } }, holds: (r) => typeof r.attrs["tag"] === "string" && r.attrs["tag"] > "p" },
  {
    filter: { tag: { gte: "p", lt: "q" } },
    holds: (r) => typeof r.attrs["tag"] === "string" && r.attrs["tag"] >= "p" && r.attrs["tag"] < "q",
  },
  {
    filter: { tag: { lte: "q", ne: "q" } },
    holds: (r) => typeof r.attrs["tag"] === "string" && r.attrs["tag"] <= "q" && r.attrs["tag"] !== "q",
  },
  { filter: { type: "Sim", tag: { in: ["q"] } }, holds: (r) => r.type === "Sim" && r.attrs["tag"] === "q" },
  { filter: { tags: { has: "p" } }, holds: (r) => has(r.attrs, "tags", "p") },
  { filter: { type: "SimLate", tags: { has: "q" } }, holds: (r) => r.type === "SimLate" && has(r.attrs, "tags", "q") },
  { filter: { status: "ok" }, holds: (r) => r.status === "ok" },
  { filter: { status: { in: ["cancelled", "terminated"] } }, holds: (r) => r.status === "cancelled" || r.status === "terminated" },
  { filter: { status: "failed", tag: { ne: "q" } }, holds: (r) => r.status === "failed" && r.attrs["tag"] !== "q" },
  { filter: { endedAt: { lt: T(200) } }, holds: (r) => r.endedAt !== undefined && r.endedAt < T(200) },
  {
    filter: { endedAt: { gte: T(200), lte: T(600) } },
    holds: (r) => r.endedAt !== undefined && r.endedAt >= T(200) && r.endedAt <= T(600),
  },
  { filter: { startedAt: { gt: T(300) } }, holds: (r) => r.startedAt !== undefined && r.startedAt > T(300), model: false },
  {
    filter: { startedAt: { lte: T(100) }, status: { ne: "ok" } },
    holds: (r) => r.startedAt !== undefined && r.startedAt <= T(100) && r.status !== "ok",
    model: false,
  },
];

/**
 * Search attributes: what `describe` shows equals what the model computed for the runs it follows,
 * and `listWhere`, with each operator, finds exactly the runs whose attributes match, as the model
 * reads the filter over the attributes it computed and over those `describe` shows.
 */
export async function checkAttributes(
  engine: Engine,
  details: ReadonlyMap<string, RunDetail>,
  model: Model,
  violate: Violate,
): Promise<void> {
  for (const { filter, holds, model: modelReads } of FILTERS) {
    const found = new Set((await engine.listWhere(filter, 100_000)).map((r) => r.id));
    const text = JSON.stringify(filter);
    for (const [id, d] of details) {
      const shown: Listed = { attrs: d.attributes, type: d.type, status: d.status, startedAt: d.startedAt, endedAt: d.endedAt };
      if (holds(shown) !== found.has(id))
        violate(
          "attributes",
          `listWhere(${text}) ${found.has(id) ? "finds" : "misses"} ${id}, which describe shows as ${listedText(shown)}`,
        );
      const m = model.runs.get(id);
      if (modelReads === false || m === undefined || !m.determined || m.exists !== true || m.runId !== d.runId) continue;
      const computed: Listed = {
        attrs: m.attrs,
        type: m.type,
        status: m.status,
        ...(m.endedAt === undefined ? {} : { endedAt: m.endedAt }),
      };
      if (holds(computed) !== found.has(id))
        violate(
          "attributes",
          `listWhere(${text}) ${found.has(id) ? "finds" : "misses"} ${id}, which the model computed as ${listedText(computed)}`,
        );
    }
  }
  for (const [id, d] of details) {
    const m = model.runs.get(id);
    if (m === undefined || !m.determined || m.exists !== true || m.runId !== d.runId) continue;
    if (!isDeepStrictEqual({ ...d.attributes }, m.attrs))
      violate(
        "attributes",
        `run ${d.runId} of ${id} has the attributes ${JSON.stringify(d.attributes)}; the model expected ${JSON.stringify(m.attrs)}`,
      );
  }
}

function listedText(r: Listed): string {
  const at = (t: number | undefined): string => (t === undefined ? "-" : `+${t - START_TIME}ms`);
  return `${r.type} ${r.status}, started ${at(r.startedAt)}, ended ${at(r.endedAt)}, attributes ${JSON.stringify(r.attrs)}`;
}

/** `list` (the engine's index) shows each run as `describe` (its journal) does: run, status and attributes. */
export function checkListing(listed: readonly RunStatus[], details: ReadonlyMap<string, RunDetail>, violate: Violate): void {
  for (const r of listed) {
    const d = details.get(r.id);
    if (d === undefined) continue;
    const a = { runId: r.runId, status: r.status, attributes: { ...r.attributes } };
    const b = { runId: d.runId, status: d.status, attributes: { ...d.attributes } };
    if (!isDeepStrictEqual(a, b)) violate("readers", `list shows ${r.id} as ${JSON.stringify(a)}; describe as ${JSON.stringify(b)}`);
  }
}

/** The read-only data-directory reader (the CLI's read path) sees the runs, statuses and attributes the engine shows. */
export async function checkReader(engine: Engine, layer: MemoryFileLayer, dir: string, violate: Violate): Promise<void> {
  const fromEngine = (await engine.list(100_000)).map((r) => ({
    id: r.id,
    runId: r.runId,
    status: r.status === "suspended" || r.status === "parked" ? "running" : r.status,
    attributes: { ...r.attributes },
  }));
  let reader: DataDirReader;
  try {
    reader = await DataDirReader.open(dir, { fileLayer: layer });
  } catch (e) {
    return violate("readers", `the data-directory reader refused the directory the engine runs on: ${String(e)}`);
  }
  try {
    const fromReader = reader
      .list({}, 100_000)
      .map((r) => ({ id: r.id, runId: r.runId, status: r.status, attributes: { ...r.attributes } }));
    const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : 1);
    fromEngine.sort(byId);
    fromReader.sort(byId);
    if (!isDeepStrictEqual(fromReader, fromEngine))
      violate("readers", `the data-directory reader lists ${JSON.stringify(fromReader)}; the engine ${JSON.stringify(fromEngine)}`);
  } finally {
    await reader.close();
  }
}
