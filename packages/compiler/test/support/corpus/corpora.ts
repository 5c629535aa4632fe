import { CASES } from "./cases.js";
import type { ChangePair } from "./pair.js";
import { REFACTORINGS } from "./refactorings.js";

/**
 * The corpora `fusee gen --check` is measured on: `project`, the pairs its rules were written
 * against, and `refactorings`, pairs written apart from the rules from the refactorings real projects make.
 */
export const CORPORA: Readonly<Record<string, readonly ChangePair[]>> = {
  project: CASES,
  refactorings: REFACTORINGS,
};
