import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A deliberate bug: an exact search-and-replace on one source file of the runtime. The simulation
 * must catch each one within the seeds `npm test` runs; one it does not catch marks a path the
 * simulation cannot see.
 */
export interface Mutant {
  /** A short name, for `--only`. */
  readonly name: string;
  /** The kind of bug, as the table reports it. */
  readonly kind: string;
  /** The file it changes, relative to `packages/runtime/src`. */
  readonly file: string;
  /** Text that occurs exactly once in the file. */
  readonly search: string;
  readonly replace: string;
}

/** The source folder mutants patch, relative to the workspace. */
export const SOURCE = "packages/runtime/src";

/** The path of a mutant's file under `root` (a workspace or a scratch copy of one). */
export const fileOf = (root: string, m: Mutant): string => join(root, SOURCE, m.file);

/** How often `search` occurs in `text` (overlapping occurrences counted). */
export function occurrences(text: string, search: string): number {
  if (search === "") return Infinity;
  let n = 0;
  for (let at = text.indexOf(search); at >= 0; at = text.indexOf(search, at + 1)) n++;
  return n;
}

/** Why a mutant cannot be applied to `text`: its search text is missing, or not unique. */
export class PatchError extends Error {
  constructor(
    readonly mutant: string,
    readonly found: number,
  ) {
    super(`mutant ${mutant}: its search text occurs ${found} times in its file; it must occur exactly once`);
    this.name = "PatchError";
  }
}

/** `text` with the mutant's bug in it. */
export function patched(text: string, m: Mutant): string {
  const found = occurrences(text, m.search);
  if (found !== 1) throw new PatchError(m.name, found);
  const at = text.indexOf(m.search);
  return text.slice(0, at) + m.replace + text.slice(at + m.search.length);
}

/** The mutant's file under `root`, read. */
export const sourceOf = (root: string, m: Mutant): string => readFileSync(fileOf(root, m), "utf8");
