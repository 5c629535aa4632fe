import type { GenVerdict } from "./gen-judge.js";
import { breaksEveryInput, breaksFinished, breaksInFlight, firstDetail, type Verdict } from "./judge.js";
import type { ChangePair } from "./pair.js";

/** One pair: what the runtime did with it and what `fusee gen --check` said. */
export interface Row {
  readonly pair: ChangePair;
  readonly runtime: Verdict;
  readonly gen: GenVerdict;
  readonly says: string;
  /** Steps whose recorded results gen says the new code cannot read (breaking type changes). */
  readonly unreadable: readonly string[];
}

/** What the journal tier says of a run left at a wait: its journal does not replay, or it holds a result the new code cannot read. */
export function journalTierFails(row: Row, wait: { readonly replayOk: boolean; readonly steps: readonly string[] }): boolean {
  return !wait.replayOk || wait.steps.some((s) => row.unreadable.includes(s));
}

/** The figures of one corpus. */
export interface Figures {
  readonly pairs: number;
  /** Pairs that break some run in flight, for some input. */
  readonly breaks: number;
  /** Of those, pairs that break runs of every input: the change breaks whatever path a run took. */
  readonly breaksEvery: number;
  /** Pairs that break only the replay of finished runs. */
  readonly finishedOnly: number;
  readonly harmless: number;
  /** Breaking pairs gen calls breaking / possibly breaking / does not flag. */
  readonly breakingCaught: number;
  readonly breakingPossibly: number;
  readonly missed: readonly Row[];
  /** Pairs breaking for every input that gen calls breaking. */
  readonly everyCaught: number;
  /** Pairs gen calls breaking, and those of them that break nothing in flight. */
  readonly refused: number;
  readonly falseAlarms: readonly Row[];
  /** Pairs gen calls possibly breaking, and those of them that break nothing in flight. */
  readonly possibly: number;
  readonly possiblyHarmless: readonly Row[];
  /** Finished-only pairs gen reports as such, and the others. */
  readonly finishedOnlyRight: number;
  /**
   * The journal tier: for each run left at a wait, whether it failing the run matches the run breaking;
   * runs of inputs for which version 2 fails on its own, from its start, are left out and counted.
   */
  readonly journal: {
    readonly runs: number;
    readonly agree: number;
    readonly falseAlarms: number;
    readonly misses: number;
    readonly newCodeFails: number;
  };
}

export function figures(rows: readonly Row[]): Figures {
  const breaking = rows.filter((r) => breaksInFlight(r.runtime));
  const every = breaking.filter((r) => breaksEveryInput(r.runtime));
  const refused = rows.filter((r) => r.gen === "breaking");
  const possibly = rows.filter((r) => r.gen === "possibly-breaking");
  const finishedOnly = rows.filter((r) => !breaksInFlight(r.runtime) && breaksFinished(r.runtime));
  let runs = 0;
  let agree = 0;
  let falseAlarms = 0;
  let misses = 0;
  let newCodeFails = 0;
  for (const r of rows)
    for (const input of r.runtime.inputs)
      for (const w of input.atWaits) {
        if (!input.freshOk) {
          newCodeFails++;
          continue;
        }
        runs++;
        if (w.breaks === journalTierFails(r, w)) agree++;
        else if (w.breaks) misses++;
        else falseAlarms++;
      }
  return {
    pairs: rows.length,
    breaks: breaking.length,
    breaksEvery: every.length,
    finishedOnly: finishedOnly.length,
    harmless: rows.length - breaking.length - finishedOnly.length,
    breakingCaught: breaking.filter((r) => r.gen === "breaking").length,
    breakingPossibly: breaking.filter((r) => r.gen === "possibly-breaking").length,
    missed: breaking.filter((r) => r.gen !== "breaking" && r.gen !== "possibly-breaking"),
    everyCaught: every.filter((r) => r.gen === "breaking").length,
    refused: refused.length,
    falseAlarms: refused.filter((r) => !breaksInFlight(r.runtime)),
    possibly: possibly.length,
    possiblyHarmless: possibly.filter((r) => !breaksInFlight(r.runtime)),
    finishedOnlyRight: finishedOnly.filter((r) => r.gen === "after-last-wait").length,
    journal: { runs, agree, falseAlarms, misses, newCodeFails },
  };
}

/** Recall: every pair that breaks runs in flight is flagged, breaking or possibly breaking. */
export function recall(f: Figures): number {
  return f.breaks === 0 ? 1 : (f.breakingCaught + f.breakingPossibly) / f.breaks;
}

/** Precision of *breaking*: the pairs gen calls breaking that do break runs in flight. */
export function precision(f: Figures): number {
  return f.refused === 0 ? 1 : (f.refused - f.falseAlarms.length) / f.refused;
}

function pct(n: number, d: number): string {
  return d === 0 ? "n/a" : `${((n / d) * 100).toFixed(1)}%`;
}

/** The figures of each corpus as a table, with the pairs gen gets wrong below it. */
export function report(corpora: Readonly<Record<string, readonly Row[]>>, everyPair = false): string {
  const lines: string[] = [];
  const head = [
    "corpus",
    "pairs",
    "break",
    "recall (flagged)",
    "breaking on every-input breaks",
    "precision (breaking)",
    "possibly breaking (harmless)",
    "finished only",
    "journal tier",
  ];
  lines.push(`| ${head.join(" | ")} |`, `| ${head.map(() => "---").join(" | ")} |`);
  for (const [name, rows] of Object.entries(corpora)) {
    const f = figures(rows);
    lines.push(
      `| ${[
        name,
        String(f.pairs),
        String(f.breaks),
        `${f.breakingCaught + f.breakingPossibly}/${f.breaks} = ${pct(f.breakingCaught + f.breakingPossibly, f.breaks)}`,
        `${f.everyCaught}/${f.breaksEvery} = ${pct(f.everyCaught, f.breaksEvery)}`,
        `${f.refused - f.falseAlarms.length}/${f.refused} = ${pct(f.refused - f.falseAlarms.length, f.refused)}`,
        `${f.possibly} (${f.possiblyHarmless.length})`,
        `${f.finishedOnlyRight}/${f.finishedOnly}`,
        `${f.journal.agree}/${f.journal.runs} runs = ${pct(f.journal.agree, f.journal.runs)}${f.journal.newCodeFails === 0 ? "" : ` (${f.journal.newCodeFails} left out: the new code fails on its own)`}`,
      ].join(" | ")} |`,
    );
  }
  for (const [name, rows] of Object.entries(corpora)) {
    const f = figures(rows);
    for (const r of f.missed) lines.push(`  ${name}: missed: ${r.pair.name} (${firstDetail(r.runtime) ?? ""})`);
    for (const r of f.falseAlarms) lines.push(`  ${name}: false alarm: ${r.pair.name}: ${firstLine(r.says)}`);
    for (const r of f.possiblyHarmless) lines.push(`  ${name}: possibly breaking, harmless: ${r.pair.name}: ${firstLine(r.says)}`);
    for (const r of rows.filter((x) => !breaksInFlight(x.runtime) && breaksFinished(x.runtime) && x.gen !== "after-last-wait"))
      lines.push(`  ${name}: finished only, gen says ${r.gen}: ${r.pair.name}`);
    if (f.journal.agree !== f.journal.runs)
      for (const r of rows)
        for (const input of r.runtime.inputs)
          for (const w of input.atWaits)
            if (input.freshOk && w.breaks !== journalTierFails(r, w))
              lines.push(
                `  ${name}: journal tier ${w.breaks ? "misses" : "refuses"}: ${r.pair.name}, input ${input.input}, wait ${w.wait}: ${w.detail ?? ""}`,
              );
    if (everyPair)
      for (const r of rows) {
        const runtime = breaksInFlight(r.runtime)
          ? breaksEveryInput(r.runtime)
            ? "breaks"
            : "breaks some"
          : breaksFinished(r.runtime)
            ? "finished only"
            : "ok";
        lines.push(`  ${name.padEnd(13)} ${r.pair.kind.padEnd(16)} ${r.pair.name.padEnd(72)} runtime: ${runtime.padEnd(13)} gen: ${r.gen}`);
      }
  }
  return lines.join("\n");
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").slice(0, 400);
}
