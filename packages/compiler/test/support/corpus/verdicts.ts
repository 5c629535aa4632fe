import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { WORKSPACE } from "../fixture.js";
import type { Verdict } from "./judge.js";
import { type ChangePair, versionFiles } from "./pair.js";

/**
 * Raised whenever the judge decides differently for the same pair (how it drives runs, what counts
 * as breaking), so that every recorded verdict is judged again.
 */
export const JUDGE_VERSION = 4;

/** The runtime's verdict on a pair, with the digest of the pair it was given for. */
export interface RecordedVerdict {
  readonly digest: string;
  readonly verdict: Verdict;
}

/** Recorded verdicts of one corpus, by pair name. */
export type VerdictBook = Readonly<Record<string, RecordedVerdict>>;

/** What a verdict depends on: both versions' files, the inputs, and the judge. */
export function digestOf(pair: ChangePair): string {
  const text = JSON.stringify([
    JUDGE_VERSION,
    versionFiles(pair.v1),
    versionFiles(pair.v2),
    pair.inputs ?? [1],
    pair.v1.className,
    pair.v2.className,
    pair.v1.typeName,
    pair.v2.typeName,
  ]);
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** Where the verdicts of a corpus are kept, in the source tree (they are committed). */
export function verdictFile(corpus: string): string {
  return join(WORKSPACE, "packages/compiler/test/support/corpus/verdicts", `${corpus}.json`);
}

export function readVerdicts(corpus: string): VerdictBook {
  const file = verdictFile(corpus);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as VerdictBook) : {};
}

export function writeVerdicts(corpus: string, book: VerdictBook): void {
  const file = verdictFile(corpus);
  mkdirSync(dirname(file), { recursive: true });
  const sorted = Object.fromEntries(Object.entries(book).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`);
}

/** Pairs whose verdict is missing or was given for another version of the pair. */
export function staleVerdicts(pairs: readonly ChangePair[], book: VerdictBook): string[] {
  return pairs.filter((p) => book[p.name]?.digest !== digestOf(p)).map((p) => p.name);
}
