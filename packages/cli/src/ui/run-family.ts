import type { DataDirRun } from "@fusee/runtime";
import { html, runPath, type Html } from "./html.js";
import { statusBadge } from "./status-badge.js";

// A family larger than this shows its first runs and says how many it left out.
const MAX_RUNS = 200;
const MAX_DEPTH = 32;

/** A run's family as the page draws it, and the IDs drawn, which the page follows live. */
export interface RunFamily {
  readonly tree: Html;
  readonly ids: readonly string[];
}

/**
 * The tree of parent and child runs a run belongs to, from its furthest ancestor in the directory
 * down, each run linked and the run itself marked; `undefined` when it has neither parent nor
 * children. A parent that is not in the directory (dropped by retention) heads the tree unlinked.
 */
export function runFamily(run: DataDirRun, runs: readonly DataDirRun[]): RunFamily | undefined {
  const byId = new Map(runs.map((r) => [r.id, r]));
  const children = new Map<string, DataDirRun[]>();
  for (const r of runs) {
    if (r.parent === undefined) continue;
    const list = children.get(r.parent.id) ?? [];
    list.push(r);
    children.set(r.parent.id, list);
  }
  if (run.parent === undefined && !children.has(run.id)) return undefined;
  let rootId = run.id;
  const seen = new Set([rootId]);
  for (let parent = run.parent; parent !== undefined && !seen.has(parent.id); parent = byId.get(parent.id)?.parent) {
    rootId = parent.id;
    seen.add(rootId);
  }
  const drawn = new Set<string>();
  const node = (id: string, depth: number): Html => {
    drawn.add(id);
    const r = byId.get(id);
    const kids = (children.get(id) ?? [])
      .filter((c) => !drawn.has(c.id))
      .sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1));
    const below: Html[] = [];
    let left = 0;
    for (const kid of kids) {
      if (drawn.size >= MAX_RUNS || depth >= MAX_DEPTH) left++;
      else below.push(node(kid.id, depth + 1));
    }
    if (left > 0) below.push(html`<li class="muted">and ${left} more</li>`);
    const label =
      r === undefined
        ? html`<span class="mono">${id}</span> <span class="muted">(not in this directory)</span>`
        : html`<a href="${runPath(id)}">${id}</a> <span class="muted">${r.type}</span> ${statusBadge(r.status)}${
            id === run.id ? html` <span class="muted">(this run)</span>` : ""
          }`;
    return html`<li data-id="${id}"${id === run.id ? html` class="current"` : ""}>${label}${below.length > 0 ? html`<ul>${below}</ul>` : ""}</li>`;
  };
  const tree = html`<ul class="family">${node(rootId, 0)}</ul>`;
  return { tree, ids: [...drawn] };
}
