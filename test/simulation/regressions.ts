import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Schedule } from "./program.js";
import { PROPERTIES, type Property } from "./properties.js";

/**
 * A schedule that once broke a property, kept as data rather than as a seed: a seed's schedule
 * changes whenever the generator learns something new, the schedule itself does not.
 */
export interface Regression {
  readonly property: Property;
  /** The violation it showed when it was saved. */
  readonly found: string;
  readonly schedule: Schedule;
}

/** The folder of saved regressions, in the sources (the compiled tests read it from there). */
export const REGRESSIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../simulation/regressions");

export function saveRegression(file: string, regression: Regression): void {
  fs.writeFileSync(file, `${JSON.stringify(regression, null, 2)}\n`);
}

/** Every saved regression, by file name. */
export function loadRegressions(dir = REGRESSIONS_DIR): Map<string, Regression> {
  const out = new Map<string, Regression>();
  for (const name of fs
    .readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .sort()) {
    const file = path.join(dir, name);
    const r = JSON.parse(fs.readFileSync(file, "utf8")) as Regression;
    if (!(r.property in PROPERTIES)) throw new Error(`${file}: no property '${String(r.property)}'`);
    if (!Array.isArray(r.schedule?.actions)) throw new Error(`${file}: no schedule with actions`);
    out.set(name, r);
  }
  return out;
}
