import { CASES } from "./cases.js";
import type { ChangePair } from "./pair.js";
import { REFACTORINGS } from "./refactorings.js";
import { UNSEEN } from "./unseen.js";

/**
 * The corpora `fusee gen --check` is measured on: `project`, the pairs its rules were written
 * against; `refactorings`, pairs written apart from the rules from the refactorings real projects
 * make; `unseen`, pairs written once the rules were done and left as judged.
 */
export const CORPORA: Readonly<Record<string, readonly ChangePair[]>> = {
  project: CASES,
  refactorings: REFACTORINGS,
  unseen: UNSEEN,
};
