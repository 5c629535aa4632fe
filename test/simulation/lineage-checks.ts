import { isDeepStrictEqual } from "node:util";
import type { Engine, ListFilter, RunDetail, RunStatus } from "@fusee/runtime";
import { DataDirReader } from "@fusee/runtime/replay";
import type { Model } from "./model.js";
import type { Program } from "./program.js";
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

/**
 * The `listWhere` filters the checks ask, each with the model's own reading of it over a run's
 * attributes: `ne` holds for a run without the attribute, `in` and the orderings only for a run
 * that has it (the tag is a string, compared as one).
 */
const FILTERS: ReadonlyArray<{ readonly filter: ListFilter; readonly holds: (attrs: Readonly<Record<string, unknown>>) => boolean }> = [
  { filter: { tag: "p" }, holds: (a) => a["tag"] === "p" },
  { filter: { tag: "q" }, holds: (a) => a["tag"] === "q" },
  { filter: { tag: { ne: "p" } }, holds: (a) => a["tag"] !== "p" },
  { filter: { tag: { in: ["p", "q"] } }, holds: (a) => a["tag"] === "p" || a["tag"] === "q" },
  { filter: { tag: { gt: "p" } }, holds: (a) => typeof a["tag"] === "string" && a["tag"] > "p" },
  { filter: { tag: { gte: "p", lt: "q" } }, holds: (a) => typeof a["tag"] === "string" && a["tag"] >= "p" && a["tag"] < "q" },
  { filter: { tag: { lte: "q", ne: "q" } }, holds: (a) => typeof a["tag"] === "string" && a["tag"] <= "q" && a["tag"] !== "q" },
  { filter: { type: "Sim", tag: { in: ["q"] } }, holds: (a) => a["tag"] === "q" },
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
  for (const { filter, holds } of FILTERS) {
    const found = new Set((await engine.listWhere(filter, 100_000)).map((r) => r.id));
    const text = JSON.stringify(filter);
    for (const [id, d] of details) {
      if (holds(d.attributes) !== found.has(id))
        violate(
          "attributes",
          `listWhere(${text}) ${found.has(id) ? "finds" : "misses"} ${id}, whose attributes are ${JSON.stringify(d.attributes)}`,
        );
      const m = model.runs.get(id);
      if (m === undefined || !m.determined || m.exists !== true || m.runId !== d.runId) continue;
      if (holds(m.attrs) !== found.has(id))
        violate(
          "attributes",
          `listWhere(${text}) ${found.has(id) ? "finds" : "misses"} ${id}, whose attributes the model computed as ${JSON.stringify(m.attrs)}`,
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
