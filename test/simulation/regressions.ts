import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * A generated input (a schedule of the single-process simulation, a plan of the flows one) that once
 * broke a property, kept as data rather than as a seed: a seed's input changes whenever the
 * generator learns something new, the input itself does not.
 */
export interface Regression<Input, P extends string = string> {
  readonly property: P;
  /** The violation it showed when it was saved. */
  readonly found: string;
  readonly schedule: Input;
}

const here = path.dirname(fileURLToPath(import.meta.url));
/** The folder of the single-process simulation's regressions, in the sources (the compiled tests read it from there). */
export const REGRESSIONS_DIR = path.resolve(here, "../../simulation/regressions");
/** The folder of the flows simulation's regressions. */
export const FLOW_REGRESSIONS_DIR = path.resolve(here, "../../simulation/regressions/flows");

export function saveRegression<Input>(file: string, regression: Regression<Input>): void {
  fs.writeFileSync(file, `${JSON.stringify(regression, null, 2)}\n`);
}

/** Every saved regression of `dir` whose property is one of `properties`, by file name. */
export function loadRegressions<Input extends { readonly actions: readonly unknown[] }, P extends string>(
  dir: string,
  properties: Readonly<Record<P, string>>,
): Map<string, Regression<Input, P>> {
  const out = new Map<string, Regression<Input, P>>();
  for (const name of fs
    .readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .sort()) {
    const file = path.join(dir, name);
    const r = JSON.parse(fs.readFileSync(file, "utf8")) as Regression<Input, P>;
    if (!(r.property in properties)) throw new Error(`${file}: no property '${String(r.property)}'`);
    if (!Array.isArray(r.schedule?.actions)) throw new Error(`${file}: no schedule with actions`);
    out.set(name, r);
  }
  return out;
}
