import { argumentAtoms } from "./argument-paths.js";
import { atomsOf, formulaOf } from "./condition-formula.js";
import { allNodes, loopKey, type Node, tryKey } from "./path-nodes.js";
import { type Choice, MAX_ITERATIONS, NO_CASE } from "./path-walk.js";

/** One thing a path depends on, with the values it can take. */
export type Variable =
  | { readonly kind: "atom"; readonly key: string; readonly values: readonly boolean[] }
  | { readonly kind: "case"; readonly key: string; readonly values: readonly string[] }
  | { readonly kind: "loop"; readonly key: string; readonly values: readonly number[] }
  | { readonly kind: "throws"; readonly key: string; readonly values: readonly boolean[] }
  | { readonly kind: "patch"; readonly key: string; readonly values: readonly boolean[] };

/** A choice together with the value it gives each variable, by index in the variable list. */
export interface Assignment {
  readonly choice: Choice;
  readonly values: readonly (boolean | string | number)[];
}

/** Stands for an enum member no recorded run can hold (new since the lock), in conditions and cases. */
export const NEVER_RECORDED = "__neverRecorded";

/** More ways through the code than this are sampled evenly rather than all tried. */
const MAX_CHOICES = 4096;

/**
 * What the paths of both versions of an entry point depend on: conditions (by their normalized
 * atoms, so the same test in both versions is one variable), `switch` values, the loops gen could
 * not count, try blocks, and the patches the recorded code had (the new code answers its own patch
 * calls from the journal, so those are no variable).
 */
export function variablesOf(old: readonly Node[], next: readonly Node[]): Variable[] {
  const atoms = new Set<string>();
  const cases = new Map<string, Set<string>>();
  const loops = new Map<string, number>();
  for (const n of [...allNodes(old), ...allNodes(next)]) {
    if (n.kind === "branch" && n.when !== undefined) atomsOf(formulaOf(n.when), atoms);
    if (n.kind === "step" && n.args !== undefined) argumentAtoms(n.args, atoms);
    if (n.kind === "branch" && n.switch !== undefined && n.cases !== undefined) {
      const known = cases.get(n.switch) ?? new Set<string>();
      for (const c of n.cases) if (c !== "default" && !c.startsWith(NEVER_RECORDED)) known.add(c);
      cases.set(n.switch, known);
    }
    // A loop entered on every path runs at least once in both versions, or it is not the same loop.
    if (n.kind === "loop" && n.count === undefined) loops.set(loopKey(n), Math.min(loops.get(loopKey(n)) ?? 1, n.entered === true ? 1 : 0));
  }
  // A try block throws on a recorded path only where the recorded code caught it: elsewhere the run failed there.
  const tries = new Set(allNodes(old).flatMap((n) => (n.kind === "try" && n.catch.length > 0 ? [tryKey(n)] : [])));
  const patches = new Set(allNodes(old).flatMap((n) => (n.kind === "patch" ? [n.id] : [])));
  const free = [...atoms].filter((a) => decided(a, cases) === undefined);
  return [
    ...[...patches].sort().map((key): Variable => ({ kind: "patch", key, values: [true, false] })),
    ...free.sort().map((key): Variable => ({ kind: "atom", key, values: [false, true] })),
    ...[...cases].map(([key, values]): Variable => ({ kind: "case", key, values: [...values, NO_CASE] })),
    ...[...loops]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, from]): Variable => ({
        kind: "loop",
        key,
        values: Array.from({ length: MAX_ITERATIONS + 1 - from }, (_, i) => i + from),
      })),
    ...[...tries].sort().map((key): Variable => ({ kind: "throws", key, values: [false, true] })),
  ];
}

/**
 * An atom that is no free variable: `s === c` for a `switch` subject `s` and one of its cases `c`
 * holds exactly when the switch takes that case; a test of a member no recorded run holds never does.
 */
function decided(
  atom: string,
  cases: ReadonlyMap<string, ReadonlySet<string>>,
): ((value: (subject: string) => string) => boolean) | undefined {
  const m = /^(.*) === (.*)$/.exec(atom);
  if (m === null) return undefined;
  const [, left = "", right = ""] = m;
  if (left.startsWith(NEVER_RECORDED) || right.startsWith(NEVER_RECORDED)) return () => false;
  if (cases.get(left)?.has(right) === true) return (value) => value(left) === right;
  if (cases.get(right)?.has(left) === true) return (value) => value(right) === left;
  return undefined;
}

/** Every way through the code, or an even sample of them when there are too many. */
export function* assignments(variables: readonly Variable[]): Generator<Assignment> {
  const total = variables.reduce((n, v) => n * v.values.length, 1);
  const count = Math.min(total, MAX_CHOICES);
  for (let k = 0; k < count; k++) {
    let rest = count === total ? k : Math.floor((k * total) / count);
    const values = variables.map((v) => {
      const value = v.values[rest % v.values.length] as boolean | string | number;
      rest = Math.floor(rest / v.values.length);
      return value;
    });
    yield { choice: choiceOf(variables, values), values };
  }
}

function choiceOf(variables: readonly Variable[], values: readonly (boolean | string | number)[]): Choice {
  const byKey = new Map<string, boolean | string | number>();
  variables.forEach((v, i) => byKey.set(`${v.kind}\u0000${v.key}`, values[i] as boolean | string | number));
  const get = (kind: Variable["kind"], key: string) => byKey.get(`${kind}\u0000${key}`);
  const cases = new Map<string, ReadonlySet<string>>(
    variables.flatMap((v) => (v.kind === "case" ? [[v.key, new Set(v.values)] as const] : [])),
  );
  const value = (subject: string) => (get("case", subject) as string | undefined) ?? NO_CASE;
  return {
    holds: (atom) => {
      const rule = decided(atom, cases);
      return rule === undefined ? get("atom", atom) === true : rule(value);
    },
    value,
    count: (loop) => (get("loop", loop) as number | undefined) ?? 0,
    throws: (block) => get("throws", block) === true,
    patched: (id) => get("patch", id) === true,
  };
}

/** A variable's value in words: what a run that took this path did. */
export function describeValue(v: Variable, value: boolean | string | number): string {
  switch (v.kind) {
    case "atom":
      return value === true ? `\`${v.key}\` holds` : `\`${v.key}\` does not hold`;
    case "case":
      return value === NO_CASE ? `\`${v.key}\` matches none of the cases` : `\`${v.key}\` is \`${String(value)}\``;
    case "loop":
      return `the loop \`${v.key}\` runs ${String(value)} time${value === 1 ? "" : "s"}`;
    case "throws":
      return value === true ? `the ${v.key} throws` : `the ${v.key} does not throw`;
    case "patch":
      return value === true ? `the run took ctx.patched("${v.key}")` : `the run did not take ctx.patched("${v.key}")`;
  }
}
