import type { Mutant } from "./mutant.js";
import type { ProbeReport } from "./report.js";

/** What became of one mutant. */
export interface Outcome {
  readonly mutant: Mutant;
  /**
   * `caught`: a seed failed; `escaped`: every seed passed; `patch-rot`: its search text is not in
   * its file exactly once; `build-failed`, `error`: the mutant could not be judged.
   */
  readonly verdict: "caught" | "escaped" | "patch-rot" | "build-failed" | "error";
  readonly report?: ProbeReport;
  readonly buildSeconds?: number;
  readonly detail?: string;
}

/** Whether the shrunk counterexample, replayed from its seed and path, gives the same violation. */
export function replays(o: Outcome): string {
  const c = o.report?.caught;
  if (c === undefined) return "";
  if (o.report?.generator === "cluster" || o.report?.generator === "leases")
    return c.rerun === undefined ? "no: the seed passed when run again" : "run again: same property";
  if (c.property === "crash") return "not shrunk (harness failure)";
  const s = c.shrunk;
  if (s === undefined) return "not shrunk";
  if (s.replayed === s.violation) return `yes (${s.actions} actions)`;
  return s.replayed === undefined ? "no" : "another violation";
}

/** The outcomes as a markdown table. */
export function outcomeTable(outcomes: readonly Outcome[]): string {
  const rows = [
    ["mutant", "kind", "caught", "generator", "seeds", "seconds", "property", "shrunk replays"],
    ["---", "---", "---", "---", "--:", "--:", "---", "---"],
  ];
  for (const o of outcomes) {
    const r = o.report;
    rows.push([
      `\`${o.mutant.name}\``,
      o.mutant.kind,
      o.verdict === "caught" ? "yes" : o.verdict === "escaped" ? "**no**" : `**${o.verdict}**`,
      r?.generator ?? "",
      r === undefined ? "" : String(r.seeds),
      r === undefined ? "" : r.seconds.toFixed(1),
      r?.caught?.property ?? "",
      replays(o),
    ]);
  }
  return rows.map((cells) => `| ${cells.join(" | ")} |`).join("\n");
}
