import type { BreakingChange } from "./errors.js";
import { formatLocation } from "./errors.js";
import type { FlowNode, ProjectIR, SourceLocation, StepIR, WorkflowIR } from "./ir.js";
import { entryText, type Lock, type LockNode, type LockSignature, type LockWorkflow, typeShape, typeText } from "./lock.js";
import type { TypeCompatibility } from "./type-compat.js";

/** What changed between the lock and the code. */
export interface CompatibilityReport {
  /** Changes runs recorded under the lock could not replay. */
  readonly breaking: readonly BreakingChange[];
  /** Every other change the new lock records, one line each (`workflow Ship added`, ...). */
  readonly changes: readonly string[];
}

/** A path element read from either side, with the location when it comes from code. */
type Node =
  | { readonly kind: "step"; readonly key: string; readonly name: string; readonly at?: SourceLocation }
  | { readonly kind: "patch"; readonly id: string; readonly then: readonly Node[]; readonly else: readonly Node[]; readonly at?: SourceLocation }
  | { readonly kind: "deprecated"; readonly id: string }
  | { readonly kind: "branch"; readonly arms: readonly (readonly Node[])[]; readonly at?: SourceLocation }
  | { readonly kind: "loop"; readonly body: readonly Node[]; readonly at?: SourceLocation }
  | { readonly kind: "try"; readonly body: readonly Node[]; readonly catch: readonly Node[]; readonly finally: readonly Node[]; readonly at?: SourceLocation };

type StepNode = Extract<Node, { kind: "step" }>;

/**
 * Compares the code with the lock, path by path. Steps are matched in order (a longest common
 * subsequence per sequence, branches arm by arm, loops body to body); what is left over was
 * inserted, removed, renamed or reordered. A `ctx.patched(id)` branch new to a sequence stands for
 * its `else` arm, the code that runs recorded before it take, so steps added in its patched arm
 * are compatible. Matched steps must keep types that recorded values still fit.
 */
export function checkCompatibility(lock: Lock | undefined, ir: ProjectIR, next: Lock, types: TypeCompatibility): CompatibilityReport {
  if (lock === undefined) return { breaking: [], changes: ir.workflows.map((w) => `workflow ${w.typeName} recorded`) };
  const breaking: BreakingChange[] = [];
  const changes: string[] = [];
  const pending: { diff: WorkflowDiff; pair: TypePair }[] = [];
  for (const [name, old] of Object.entries(lock.workflows)) {
    const current = ir.workflows.find((w) => w.typeName === name);
    if (current === undefined) {
      const at = { file: old.file, line: 1 };
      breaking.push({
        workflow: name,
        step: name,
        kind: "workflow-removed",
        at,
        message: `Workflow ${name} (${formatLocation(at)}): the workflow was removed, so its runs recorded in fusee.lock.json could not continue. Fix: keep the class until none of its runs are in flight, or pass --accept-breaking when no runs of ${name} are in flight.`,
      });
      continue;
    }
    // An entry recorded exactly as the code now reads has nothing to compare.
    const now = next.workflows[name];
    if (now !== undefined && entryText(old) === entryText(now)) continue;
    const diff = new WorkflowDiff(old, current);
    diff.run();
    breaking.push(...diff.breaking);
    for (const pair of diff.typePairs) pending.push({ diff, pair });
  }
  const questions = pending.flatMap(({ pair }) => pair.questions);
  const answers = types.check(questions);
  let offset = 0;
  const reported = new Set<string>();
  for (const { diff, pair } of pending) {
    const fits = answers.slice(offset, offset + pair.questions.length).every(Boolean);
    offset += pair.questions.length;
    const key = `${diff.current.typeName}\u0000${pair.step.key}`;
    if (!fits && !reported.has(key)) {
      reported.add(key);
      breaking.push(diff.typeChanged(pair));
    }
  }
  for (const [name, entry] of Object.entries(next.workflows)) {
    const old = lock.workflows[name];
    if (old === undefined) changes.push(`workflow ${name} added`);
    else if (entryText(old) !== entryText(entry)) changes.push(...describeChanges(name, old, entry));
  }
  return { breaking, changes };
}

interface TypePair {
  readonly step: StepIR;
  readonly old: LockSignature;
  readonly questions: readonly { readonly source: string; readonly target: string }[];
}

class WorkflowDiff {
  readonly breaking: BreakingChange[] = [];
  readonly typePairs: TypePair[] = [];
  private readonly stepsByKey: Map<string, StepIR>;
  private readonly seen = new Set<string>();

  constructor(
    private readonly old: LockWorkflow,
    readonly current: WorkflowIR,
  ) {
    this.stepsByKey = new Map(current.steps.map((s) => [s.key, s]));
  }

  run(): void {
    const flows = new Map(this.current.flows.map((f) => [f.entry, f]));
    for (const [entry, oldNodes] of Object.entries(this.old.paths)) {
      const flow = flows.get(entry);
      const at = flow?.at ?? this.current.at;
      this.sequence(oldNodes.map(fromLock), (flow?.nodes ?? []).map(fromFlow), at, entry);
    }
  }

  private sequence(oldRaw: readonly Node[], nextRaw: readonly Node[], fallback: SourceLocation, entry: string): void {
    const nextPatches = new Set(nextRaw.flatMap((n) => (n.kind === "patch" ? [n.id] : [])));
    const nextDeprecated = new Set(nextRaw.flatMap((n) => (n.kind === "deprecated" ? [n.id] : [])));
    const oldPatches = new Set(oldRaw.flatMap((n) => (n.kind === "patch" ? [n.id] : [])));
    const old = this.spliceOld(oldRaw, nextPatches, nextDeprecated, fallback, entry);
    const next = spliceNew(nextRaw, oldPatches);
    const pairs = align(old.map(signature), next.map(signature));
    const anchorAt = (gap: number): SourceLocation => {
      const after = pairs[gap];
      const before = gap > 0 ? pairs[gap - 1] : undefined;
      return locationOf(after === undefined ? undefined : next[after[1]]) ?? locationOf(before === undefined ? undefined : next[before[1]]) ?? fallback;
    };
    const oldLeft: { step: StepNode; gap: number }[] = [];
    const nextLeft: { step: StepNode; gap: number }[] = [];
    let i = 0;
    let j = 0;
    pairs.forEach(([oi, nj], gap) => {
      for (; i < oi; i++) for (const step of steps(old[i])) oldLeft.push({ step, gap });
      for (; j < nj; j++) for (const step of steps(next[j])) nextLeft.push({ step, gap });
      this.node(old[oi], next[nj], anchorAt(gap), entry);
      i = oi + 1;
      j = nj + 1;
    });
    for (; i < old.length; i++) for (const step of steps(old[i])) oldLeft.push({ step, gap: pairs.length });
    for (; j < next.length; j++) for (const step of steps(next[j])) nextLeft.push({ step, gap: pairs.length });
    this.classify(oldLeft, nextLeft, anchorAt, entry);
  }

  private node(old: Node | undefined, next: Node | undefined, fallback: SourceLocation, entry: string): void {
    if (old === undefined || next === undefined) return;
    const at = locationOf(next) ?? fallback;
    if (old.kind === "step" && next.kind === "step") {
      const step = this.stepsByKey.get(next.key);
      const recorded = this.old.steps[old.key];
      if (step !== undefined && recorded !== undefined) this.typePairs.push(typePair(step, recorded));
    } else if (old.kind === "patch" && next.kind === "patch") {
      this.sequence(old.then, next.then, at, entry);
      this.sequence(old.else, next.else, at, entry);
    } else if (old.kind === "branch" && next.kind === "branch") {
      const arms = Math.max(old.arms.length, next.arms.length);
      for (let k = 0; k < arms; k++) this.sequence(old.arms[k] ?? [], next.arms[k] ?? [], at, entry);
    } else if (old.kind === "loop" && next.kind === "loop") {
      this.sequence(old.body, next.body, at, entry);
    } else if (old.kind === "try" && next.kind === "try") {
      this.sequence(old.body, next.body, at, entry);
      this.sequence(old.catch, next.catch, at, entry);
      this.sequence(old.finally, next.finally, at, entry);
    }
  }

  /** Names left on both sides moved; a name left on one side only was removed, inserted, or renamed in place. */
  private classify(
    oldLeft: readonly { step: StepNode; gap: number }[],
    nextLeft: readonly { step: StepNode; gap: number }[],
    anchorAt: (gap: number) => SourceLocation,
    entry: string,
  ): void {
    const oldNames = new Set(oldLeft.map((o) => o.step.name));
    const nextNames = new Set(nextLeft.map((n) => n.step.name));
    const paired = new Set<number>();
    for (const o of oldLeft) {
      if (nextNames.has(o.step.name)) {
        const moved = nextLeft.find((n) => n.step.name === o.step.name);
        this.report("reordered", o.step.name, moved?.step.at ?? anchorAt(o.gap), entry);
        continue;
      }
      const index = nextLeft.findIndex((n, k) => n.gap === o.gap && !paired.has(k) && !oldNames.has(n.step.name));
      const renamed = nextLeft[index];
      if (renamed !== undefined) {
        paired.add(index);
        this.report("renamed", o.step.name, renamed.step.at ?? anchorAt(o.gap), entry, renamed.step.name);
      } else {
        this.report("removed", o.step.name, anchorAt(o.gap), entry);
      }
    }
    nextLeft.forEach((n, k) => {
      if (!paired.has(k) && !oldNames.has(n.step.name)) this.report("inserted", n.step.name, n.step.at ?? anchorAt(n.gap), entry);
    });
  }

  /** Old patch branches the code no longer has at this level stand for their patched arm. */
  private spliceOld(nodes: readonly Node[], nextPatches: ReadonlySet<string>, nextDeprecated: ReadonlySet<string>, at: SourceLocation, entry: string): Node[] {
    const out: Node[] = [];
    for (const n of nodes) {
      if (n.kind === "deprecated") continue;
      if (n.kind === "patch" && !nextPatches.has(n.id)) {
        const patched = n.then.flatMap(steps).map((s) => s.name).join(",");
        const unpatched = n.else.flatMap(steps).map((s) => s.name);
        if (!nextDeprecated.has(n.id) && unpatched.join(",") !== patched) {
          const first = unpatched[0] ?? n.then.flatMap(steps)[0]?.name ?? n.id;
          this.push({
            workflow: this.current.typeName,
            step: first,
            kind: "removed",
            at,
            message:
              `Workflow ${this.current.typeName}, ${describeEntry(entry)}: the code path of runs that did not take ctx.patched("${n.id}") was removed (${formatLocation(at)}), so those runs could not replay` +
              `${unpatched.length > 0 ? ` (they recorded step${unpatched.length > 1 ? "s" : ""} ${unpatched.map((s) => `"${s}"`).join(", ")})` : ""}. ` +
              `Fix: keep the if/else on ctx.patched("${n.id}") while such runs are in flight, then replace it with ctx.deprecatePatch("${n.id}"); or pass --accept-breaking when no runs of ${this.current.typeName} are in flight.`,
          });
        }
        out.push(...this.spliceOld(n.then, nextPatches, nextDeprecated, at, entry));
      } else out.push(n);
    }
    return out;
  }

  typeChanged(pair: TypePair): BreakingChange {
    const { step, old } = pair;
    const before = `(${old.args.map(typeText).join(", ")}) => ${typeText(old.result)}`;
    const after = `(${step.args.map((a) => a.type.display).join(", ")}) => ${step.result.display}`;
    return {
      workflow: this.current.typeName,
      step: step.name,
      kind: "type-changed",
      at: step.at,
      message:
        `Workflow ${this.current.typeName}: the type of step "${step.name}" changed from ${before} to ${after} (${formatLocation(step.at)}), and values recorded under the old type do not fit the new one, so runs in flight could not replay. ` +
        `Fix: keep the old step and call a new one (another name) in if (ctx.patched("${step.name}-v2")) { ... } else { ... } with "${step.name}-v2" declared in @Workflow({ patches }); or widen the type so old values still fit; or pass --accept-breaking when no runs of ${this.current.typeName} are in flight.`,
    };
  }

  private report(kind: "inserted" | "removed" | "renamed" | "reordered", step: string, at: SourceLocation, entry: string, renamedTo?: string): void {
    const w = this.current.typeName;
    const where = formatLocation(at);
    const what =
      kind === "inserted"
        ? `step "${step}" was inserted (${where})`
        : kind === "removed"
          ? `step "${step}" was removed (near ${where})`
          : kind === "renamed"
            ? `step "${step}" was renamed to "${renamedTo ?? "?"}" (${where})`
            : `step "${step}" was moved to another position (${where})`;
    const id = `${kind === "inserted" ? "add" : kind === "removed" ? "remove" : kind === "renamed" ? "rename" : "reorder"}-${renamedTo ?? step}`;
    const guard =
      kind === "inserted"
        ? `guard it with if (this.ctx.patched("${id}")) { ... }`
        : `put the new code in if (this.ctx.patched("${id}")) { ... } and keep the old steps in its else branch`;
    this.push({
      workflow: w,
      step,
      kind,
      at,
      message:
        `Workflow ${w}, ${describeEntry(entry)}: ${what} on a path recorded in fusee.lock.json, so runs started before this change could not replay. ` +
        `Fix: ${guard}, declaring "${id}" in @Workflow({ patches }); or pass --accept-breaking when no runs of ${w} are in flight.`,
    });
  }

  private push(change: BreakingChange): void {
    const key = `${change.kind}\u0000${change.step}\u0000${formatLocation(change.at)}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.breaking.push(change);
  }
}

/** New patch branches stand for their `else` arm: the code runs recorded before the patch replay. */
function spliceNew(nodes: readonly Node[], oldPatches: ReadonlySet<string>): Node[] {
  const out: Node[] = [];
  for (const n of nodes) {
    if (n.kind === "deprecated") continue;
    if (n.kind === "patch" && !oldPatches.has(n.id)) out.push(...spliceNew(n.else, oldPatches));
    else out.push(n);
  }
  return out;
}

function typePair(step: StepIR, old: LockSignature): TypePair {
  const questions = [{ source: typeShape(old.result), target: step.result.shape }];
  step.args.forEach((arg, i) => {
    const recorded = old.args[i];
    const target = arg.optional ? `${arg.type.shape} | undefined` : arg.rest ? `${arg.type.shape}[number]` : arg.type.shape;
    questions.push({ source: recorded === undefined ? "undefined" : argShape(typeShape(recorded)), target });
  });
  return { step, old, questions: questions.filter((q) => q.source !== q.target) };
}

/** A recorded argument shape: `T?` is `T | undefined`, `...T` is an element of `T`. */
function argShape(shape: string): string {
  if (shape.startsWith("...")) return `(${shape.slice(3)})[number]`;
  if (shape.endsWith("?")) return `${shape.slice(0, -1)} | undefined`;
  return shape;
}

function signature(node: Node): string {
  switch (node.kind) {
    case "step":
      return `s:${node.name}`;
    case "patch":
      return `p:${node.id}`;
    case "deprecated":
      return `d:${node.id}`;
    case "branch":
      return "b";
    case "loop":
      return "l";
    case "try":
      return "t";
  }
}

/** Index pairs of a longest common subsequence, in order. */
function align(a: readonly string[], b: readonly string[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  const table: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    const row = table[i] as number[];
    const below = table[i + 1] as number[];
    for (let j = m - 1; j >= 0; j--) {
      row[j] = a[i] === b[j] ? (below[j + 1] as number) + 1 : Math.max(below[j] as number, row[j + 1] as number);
    }
  }
  const pairs: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if ((table[i + 1]?.[j] ?? 0) >= (table[i]?.[j + 1] ?? 0)) i++;
    else j++;
  }
  return pairs;
}

function steps(node: Node | undefined): StepNode[] {
  if (node === undefined) return [];
  switch (node.kind) {
    case "step":
      return [node];
    case "patch":
      return [...node.then.flatMap(steps), ...node.else.flatMap(steps)];
    case "deprecated":
      return [];
    case "branch":
      return node.arms.flatMap((arm) => arm.flatMap(steps));
    case "loop":
      return node.body.flatMap(steps);
    case "try":
      return [...node.body, ...node.catch, ...node.finally].flatMap(steps);
  }
}

function locationOf(node: Node | undefined): SourceLocation | undefined {
  if (node === undefined || node.kind === "deprecated") return undefined;
  return node.at ?? steps(node).find((s) => s.at !== undefined)?.at;
}

function stepName(key: string): string {
  return key.replace(/#\d+$/, "");
}

function fromLock(node: LockNode): Node {
  if (typeof node === "string") return { kind: "step", key: node, name: stepName(node) };
  if ("patch" in node) return { kind: "patch", id: node.patch, then: node.then.map(fromLock), else: node.else.map(fromLock) };
  if ("deprecatedPatch" in node) return { kind: "deprecated", id: node.deprecatedPatch };
  if ("branch" in node) return { kind: "branch", arms: node.branch.map((arm) => arm.map(fromLock)) };
  if ("loop" in node) return { kind: "loop", body: node.loop.map(fromLock) };
  return { kind: "try", body: node.try.map(fromLock), catch: node.catch.map(fromLock), finally: node.finally.map(fromLock) };
}

function fromFlow(node: FlowNode): Node {
  switch (node.kind) {
    case "step":
      return { kind: "step", key: node.key, name: stepName(node.key), at: node.at };
    case "patch":
      return { kind: "patch", id: node.id, then: node.then.map(fromFlow), else: node.else.map(fromFlow), at: node.at };
    case "deprecatedPatch":
      return { kind: "deprecated", id: node.id };
    case "branch":
      return { kind: "branch", arms: node.arms.map((arm) => arm.map(fromFlow)), at: node.at };
    case "loop":
      return { kind: "loop", body: node.body.map(fromFlow), at: node.at };
    case "try":
      return { kind: "try", body: node.body.map(fromFlow), catch: node.catch.map(fromFlow), finally: node.finally.map(fromFlow), at: node.at };
  }
}

function describeEntry(entry: string): string {
  if (entry === "run") return "run()";
  const [kind, ...name] = entry.split(":");
  return `${kind} handler "${name.join(":")}"`;
}

/** One line per compatible difference between two lock entries of a workflow. */
function describeChanges(name: string, old: LockWorkflow, next: LockWorkflow): string[] {
  const out: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  for (const id of next.patches) if (!old.patches.includes(id)) out.push(`${name}: patch "${id}" declared`);
  for (const id of old.patches) if (!next.patches.includes(id)) out.push(`${name}: patch "${id}" no longer declared`);
  if (!same(old.input, next.input)) out.push(`${name}: input type changed`);
  if (!same(old.output, next.output)) out.push(`${name}: result type changed`);
  for (const kind of ["steps", "signals", "queries", "updates"] as const) {
    const noun = kind === "queries" ? "query" : kind.slice(0, -1);
    for (const key of Object.keys(next[kind])) {
      if (!(key in old[kind])) out.push(`${name}: ${noun} "${key}" added`);
      else if (!same(old[kind][key], next[kind][key])) out.push(`${name}: ${noun} "${key}" changed its signature`);
    }
    for (const key of Object.keys(old[kind])) if (!(key in next[kind])) out.push(`${name}: ${noun} "${key}" removed`);
  }
  for (const entry of Object.keys(next.paths)) {
    if (entry in old.paths && !same(old.paths[entry], next.paths[entry])) out.push(`${name}: step order of ${describeEntry(entry)} changed`);
  }
  if (old.class !== next.class || old.file !== next.file) out.push(`${name}: now class ${next.class} in ${next.file}`);
  return out;
}
