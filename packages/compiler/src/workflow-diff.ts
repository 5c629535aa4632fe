import type { BreakingChange } from "./errors.js";
import { formatLocation } from "./errors.js";
import type { SourceLocation, StepIR, WorkflowIR } from "./ir.js";
import { type LockSignature, type LockWorkflow, typeShape, typeText } from "./lock.js";
import {
  align,
  canWait,
  describeLeaf,
  fromFlow,
  fromLock,
  type Leaf,
  leafName,
  leaves,
  locationOf,
  type Node,
  records,
  samePaths,
  signature,
} from "./path-nodes.js";

/** A matched step whose recorded result must still fit the type the code now gives it. */
export interface TypePair {
  readonly step: StepIR;
  readonly old: LockSignature;
  readonly questions: readonly { readonly source: string; readonly target: string }[];
}

type Kind = BreakingChange["kind"];

/**
 * Compares one workflow's recorded paths with the code's. Sequences that make the same calls on
 * every path are equal whatever their shape; otherwise calls are matched in order (a longest common
 * subsequence), branches arm by arm with their conditions, loops with their headers, and what is
 * left over was inserted, removed, renamed or reordered. In `run()`, a change after the last point
 * where a recorded run could have stopped reaches finished runs only, and is reported as such.
 */
export class WorkflowDiff {
  readonly breaking: BreakingChange[] = [];
  readonly notes: string[] = [];
  private readonly seen = new Set<string>();
  /** True while comparing what follows the last wait of `run()`. */
  private tail = false;

  constructor(
    private readonly old: LockWorkflow,
    readonly current: WorkflowIR,
    private readonly lockVersion: number,
  ) {}

  run(): void {
    const flows = new Map(this.current.flows.map((f) => [f.entry, f]));
    for (const [entry, oldNodes] of Object.entries(this.old.paths)) {
      const flow = flows.get(entry);
      const at = flow?.at ?? this.current.at;
      const old = oldNodes.map(fromLock);
      const next = (flow?.nodes ?? []).flatMap((n) => fromFlow(n, this.lockVersion < 2));
      if (entry === "run" && this.lockVersion >= 2) this.runPath(old, next, at);
      else this.sequence(old, next, at, entry);
    }
    this.reusedPatches();
  }

  /** Steps of the lock still defined by the code: their recorded results must fit the new result types. */
  typePairs(): TypePair[] {
    const out: TypePair[] = [];
    for (const step of this.current.steps) {
      const recorded = this.old.steps[step.key];
      if (recorded !== undefined) out.push(typePair(step, recorded));
    }
    return out;
  }

  /** `run()`: what follows the last wait of the recorded path can only have been replayed by finished runs. */
  private runPath(old: readonly Node[], next: readonly Node[], at: SourceLocation): void {
    const last = old.map(canWait).lastIndexOf(true);
    const head = old
      .slice(0, last + 1)
      .map(signature)
      .join("\n");
    if (
      next
        .slice(0, last + 1)
        .map(signature)
        .join("\n") !== head
    ) {
      this.sequence(old, next, at, "run");
      return;
    }
    this.sequence(old.slice(0, last + 1), next.slice(0, last + 1), at, "run");
    this.tail = true;
    try {
      this.sequence(old.slice(last + 1), next.slice(last + 1), locationOf(next[last]) ?? at, "run");
    } finally {
      this.tail = false;
    }
  }

  private sequence(oldRaw: readonly Node[], codeRaw: readonly Node[], fallback: SourceLocation, entry: string): void {
    if (samePaths(oldRaw, codeRaw)) return;
    const oldPatches = new Set(oldRaw.flatMap((n) => (n.kind === "patch" ? [n.id] : [])));
    // A renamed patch is reported once, then compared under its recorded ID like any other patch.
    const renamed = this.renamedPatches(oldRaw, codeRaw, oldPatches, fallback, entry);
    const nextRaw = codeRaw.map((n) => (n.kind === "patch" && renamed.has(n.id) ? { ...n, id: renamed.get(n.id) as string } : n));
    const nextPatches = new Set(nextRaw.flatMap((n) => (n.kind === "patch" ? [n.id] : [])));
    const nextDeprecated = new Set(nextRaw.flatMap((n) => (n.kind === "deprecated" ? [n.id] : [])));
    const old = this.spliceOld(oldRaw, nextPatches, nextDeprecated, fallback, entry);
    const next = spliceNew(nextRaw, oldPatches);
    if (samePaths(old, next)) return;
    const pairs = align(old.map(signature), next.map(signature));
    const anchorAt = (gap: number): SourceLocation => {
      const after = pairs[gap];
      const before = gap > 0 ? pairs[gap - 1] : undefined;
      return (
        locationOf(after === undefined ? undefined : next[after[1]]) ??
        locationOf(before === undefined ? undefined : next[before[1]]) ??
        fallback
      );
    };
    /** Whether the recorded sequence journals anything from old index `i` on. */
    const recordedFrom = (i: number) => old.slice(i).some(records);
    const oldLeft: { leaf: Leaf; gap: number }[] = [];
    const nextLeft: { leaf: Leaf; gap: number; recordedAfter: boolean }[] = [];
    const matched: [Node, Node][] = [];
    let i = 0;
    let j = 0;
    pairs.forEach(([oi, nj], gap) => {
      for (; i < oi; i++) for (const leaf of leaves(old[i])) oldLeft.push({ leaf, gap });
      for (; j < nj; j++) for (const leaf of leaves(next[j])) nextLeft.push({ leaf, gap, recordedAfter: recordedFrom(oi) });
      const o = old[oi];
      const n = next[nj];
      if (o !== undefined && n !== undefined) matched.push([o, n]);
      this.node(o, n, anchorAt(gap), entry);
      i = oi + 1;
      j = nj + 1;
    });
    for (; i < old.length; i++) for (const leaf of leaves(old[i])) oldLeft.push({ leaf, gap: pairs.length });
    for (; j < next.length; j++) for (const leaf of leaves(next[j])) nextLeft.push({ leaf, gap: pairs.length, recordedAfter: false });
    this.swaps(matched, entry);
    this.classify(oldLeft, nextLeft, anchorAt, entry);
  }

  private node(old: Node | undefined, next: Node | undefined, fallback: SourceLocation, entry: string): void {
    if (old === undefined || next === undefined) return;
    const at = locationOf(next) ?? fallback;
    if (old.kind === "patch" && next.kind === "patch") {
      this.sequence(old.then, next.then, at, entry);
      this.sequence(old.else, next.else, at, entry);
    } else if (old.kind === "branch" && next.kind === "branch") {
      if (old.when !== undefined && next.when !== undefined && old.when !== next.when && !samePaths([old], [next])) {
        this.condition("branch", old.when, next.when, leaves(old)[0], at, entry);
        return;
      }
      const arms = Math.max(old.arms.length, next.arms.length);
      for (let k = 0; k < arms; k++) this.sequence(old.arms[k] ?? [], next.arms[k] ?? [], at, entry);
    } else if (old.kind === "loop" && next.kind === "loop") {
      if (old.over !== undefined && next.over !== undefined && old.over !== next.over) {
        this.condition("loop", old.over, next.over, leaves(old)[0], at, entry);
        return;
      }
      this.sequence(old.body, next.body, at, entry);
    } else if (old.kind === "try" && next.kind === "try") {
      this.sequence(old.body, next.body, at, entry);
      this.sequence(old.catch, next.catch, at, entry);
      this.sequence(old.finally, next.finally, at, entry);
    }
  }

  /** Calls of one step matched in order whose arguments changed places: replay hands each the other's result. */
  private swaps(matched: readonly [Node, Node][], entry: string): void {
    const byName = new Map<string, { old: string[]; next: string[]; at?: SourceLocation }>();
    for (const [o, n] of matched) {
      if (o.kind !== "step" || n.kind !== "step" || o.args === undefined || n.args === undefined) continue;
      const group = byName.get(o.name) ?? { old: [], next: [] };
      group.old.push(o.args);
      group.next.push(n.args);
      group.at ??= n.at;
      byName.set(o.name, group);
    }
    for (const [name, group] of byName) {
      if (group.old.join("\u0000") === group.next.join("\u0000")) continue;
      if ([...group.old].sort().join("\u0000") !== [...group.next].sort().join("\u0000")) continue;
      const at = group.at ?? this.current.at;
      this.push(
        "reordered",
        name,
        at,
        `calls of step "${name}" were swapped: they now pass (${group.next.join("), (")}) where runs recorded (${group.old.join("), (")}) (${formatLocation(at)}): replay would hand each call the other's recorded result`,
        entry,
        `reorder-${name}`,
      );
    }
  }

  /** Leaves left on both sides moved; left on one side only, a call was removed, inserted, or renamed in place. */
  private classify(
    oldLeft: readonly { leaf: Leaf; gap: number }[],
    nextLeft: readonly { leaf: Leaf; gap: number; recordedAfter: boolean }[],
    anchorAt: (gap: number) => SourceLocation,
    entry: string,
  ): void {
    // A wait that is gone never stops a replay; a new one stops it only before calls runs recorded.
    const oldCalls = oldLeft.filter((o) => o.leaf.kind !== "wait");
    const oldNames = new Set(oldCalls.map((o) => leafName(o.leaf)));
    const nextNames = new Set(nextLeft.filter((n) => n.leaf.kind !== "wait").map((n) => leafName(n.leaf)));
    const paired = new Set<number>();
    for (const o of oldCalls) {
      const name = leafName(o.leaf);
      if (nextNames.has(name)) {
        const moved = nextLeft.find((n) => leafName(n.leaf) === name);
        const at = moved?.leaf.at ?? anchorAt(o.gap);
        this.push(
          "reordered",
          name,
          at,
          `${describeLeaf(o.leaf)} was moved to another position (${formatLocation(at)})`,
          entry,
          `reorder-${name}`,
        );
        continue;
      }
      const index = nextLeft.findIndex(
        (n, k) => n.gap === o.gap && n.leaf.kind !== "wait" && !paired.has(k) && !oldNames.has(leafName(n.leaf)),
      );
      const renamed = nextLeft[index];
      if (renamed !== undefined) {
        paired.add(index);
        const at = renamed.leaf.at ?? anchorAt(o.gap);
        this.push(
          "renamed",
          name,
          at,
          `${renaming(o.leaf, renamed.leaf)} (${formatLocation(at)})`,
          entry,
          `rename-${slug(leafName(renamed.leaf))}`,
        );
      } else {
        const at = anchorAt(o.gap);
        this.push("removed", name, at, `${describeLeaf(o.leaf)} was removed (near ${formatLocation(at)})`, entry, `remove-${slug(name)}`);
      }
    }
    nextLeft.forEach((n, k) => {
      if (paired.has(k)) return;
      const name = leafName(n.leaf);
      const at = n.leaf.at ?? anchorAt(n.gap);
      if (n.leaf.kind === "wait") {
        if (n.recordedAfter || this.tail)
          this.push(
            "inserted",
            name,
            at,
            `${describeLeaf(n.leaf)} was inserted before calls runs recorded (${formatLocation(at)}), where their replay would stop`,
            entry,
            `wait-${slug(n.leaf.on)}`,
          );
      } else if (!oldNames.has(name)) {
        this.push("inserted", name, at, `${describeLeaf(n.leaf)} was inserted (${formatLocation(at)})`, entry, `add-${slug(name)}`);
      }
    });
  }

  private condition(what: "branch" | "loop", old: string, next: string, first: Leaf | undefined, at: SourceLocation, entry: string): void {
    const subject =
      what === "branch"
        ? `the condition of a branch changed from \`${old}\` to \`${next}\``
        : `the header of a loop changed from \`${old}\` to \`${next}\``;
    this.push(
      "condition-changed",
      first === undefined ? what : leafName(first),
      at,
      `${subject} (${formatLocation(at)}): a run may now take another path than the one it recorded`,
      entry,
      `${what}-${first === undefined ? "change" : slug(leafName(first))}`,
    );
  }

  /** Old patches gone at this level and new ones at the same place with the same arms: renamed IDs, new to old. */
  private renamedPatches(
    old: readonly Node[],
    next: readonly Node[],
    oldPatches: ReadonlySet<string>,
    at: SourceLocation,
    entry: string,
  ): Map<string, string> {
    const renamed = new Map<string, string>();
    const nextPatches = new Set(next.flatMap((n) => (n.kind === "patch" ? [n.id] : [])));
    const added = next.filter((n): n is Extract<Node, { kind: "patch" }> => n.kind === "patch" && !oldPatches.has(n.id));
    for (const o of old) {
      if (o.kind !== "patch" || nextPatches.has(o.id)) continue;
      const shape = (p: Extract<Node, { kind: "patch" }>) => JSON.stringify([p.then.map(signature), p.else.map(signature)]);
      const match = added.find((n) => shape(n) === shape(o) && !renamed.has(n.id));
      if (match === undefined) continue;
      renamed.set(match.id, o.id);
      const where = match.at ?? at;
      this.push(
        "patch-renamed",
        o.id,
        where,
        `patch ID "${o.id}" was renamed to "${match.id}" (${formatLocation(where)}): runs that recorded the marker "${o.id}" find no ctx.patched("${o.id}") to answer it`,
        entry,
        undefined,
        `keep the ID "${o.id}" in ctx.patched() and in @Workflow({ patches }) while such runs are in flight`,
      );
    }
    return renamed;
  }

  /** Old patch branches the code no longer has at this level stand for their patched arm. */
  private spliceOld(
    nodes: readonly Node[],
    nextPatches: ReadonlySet<string>,
    nextDeprecated: ReadonlySet<string>,
    at: SourceLocation,
    entry: string,
  ): Node[] {
    const out: Node[] = [];
    for (const n of nodes) {
      if (n.kind === "deprecated") continue;
      if (n.kind === "patch" && !nextPatches.has(n.id)) {
        if (!nextDeprecated.has(n.id)) {
          const unpatched = n.else.flatMap(leaves).filter((l) => l.kind !== "wait");
          this.push(
            "removed",
            n.id,
            at,
            `the guard ctx.patched("${n.id}") was removed (near ${formatLocation(at)}). Every run that passed it recorded the marker "${n.id}" and expects the guard there` +
              (unpatched.length > 0 ? `; runs that did not take it also recorded ${unpatched.map(describeLeaf).join(", ")}` : ""),
            entry,
            undefined,
            `keep the if/else on ctx.patched("${n.id}") while such runs are in flight, then replace it with ctx.deprecatePatch("${n.id}") followed by the patched code`,
          );
        }
        out.push(...this.spliceOld(n.then, nextPatches, nextDeprecated, at, entry));
      } else out.push(n);
    }
    return out;
  }

  /** A patch ID the lock records once that now guards a second change: it says nothing about the second. */
  private reusedPatches(): void {
    const recorded = new Set(this.old.patches);
    const uses = new Map<string, SourceLocation[]>();
    for (const use of this.current.patchUses) uses.set(use.id, [...(uses.get(use.id) ?? []), use.at]);
    const before = new Map<string, number>();
    const count = (nodes: readonly Node[]): void => {
      for (const n of nodes) {
        if (n.kind === "patch") before.set(n.id, (before.get(n.id) ?? 0) + 1);
        if (n.kind === "patch") [n.then, n.else].forEach(count);
        if (n.kind === "branch") n.arms.forEach(count);
        if (n.kind === "loop") count(n.body);
        if (n.kind === "try") [n.body, n.catch, n.finally].forEach(count);
      }
    };
    for (const nodes of Object.values(this.old.paths)) count(nodes.map(fromLock));
    for (const [id, at] of uses) {
      if (!recorded.has(id) || at.length <= (before.get(id) ?? 0) || at.length < 2) continue;
      const second = at[at.length - 1] as SourceLocation;
      this.notes.push(
        `${this.current.typeName}: patch ID "${id}", recorded for one change, now also guards another (${formatLocation(second)}); runs that passed the first guard take the second as patched too. Declare a new ID for the new change.`,
      );
    }
  }

  typeChanged(pair: TypePair): BreakingChange {
    const { step, old } = pair;
    const w = this.current.typeName;
    const methods = step.resultMethods ?? [];
    const why =
      methods.length > 0 && typeText(old.result) !== step.result.display
        ? `; it is now class ${step.result.display}, whose methods (${methods.join(", ")}) recorded plain values do not have`
        : "";
    return {
      workflow: w,
      step: step.name,
      kind: "type-changed",
      at: step.at,
      message:
        `Workflow ${w}: the result type of step "${step.name}" changed from ${typeText(old.result)} to ${step.result.display} (${formatLocation(step.at)})${why}; ` +
        `recorded shape ${typeShape(old.result)}, new shape ${step.result.shape}. Values recorded under the old type do not fit the new one, so runs in flight could not replay. ` +
        `Fix: keep the old step and call a new one (another name) in if (this.ctx.patched("${slug(step.name)}-v2")) { ... } else { ... } with "${slug(step.name)}-v2" declared in @Workflow({ patches }); or widen the type so old values still fit; or pass --accept-breaking when no runs of ${w} are in flight.`,
    };
  }

  private push(kind: Kind, subject: string, at: SourceLocation, what: string, entry: string, patchId?: string, fix?: string): void {
    const w = this.current.typeName;
    const finishedOnly = this.tail;
    const id = patchId === undefined ? undefined : slug(patchId);
    const guard =
      fix ??
      (kind === "inserted"
        ? `guard it with if (this.ctx.patched("${id}")) { ... }, declaring "${id}" in @Workflow({ patches })`
        : `put the new code in if (this.ctx.patched("${id}")) { ... } and keep the old calls in its else branch, declaring "${id}" in @Workflow({ patches })`);
    const message = finishedOnly
      ? `Workflow ${w}, ${describeEntry(entry)}: ${what}, after the last point where a run can wait, so no run in flight is affected, but finished runs no longer replay (queries and describe of runs kept by keepHistory). ` +
        `Fix: ${guard} if finished runs must stay readable; else nothing to do (fusee patches --data DIR shows which runs still need old code).`
      : `Workflow ${w}, ${describeEntry(entry)}: ${what}. Runs recorded in fusee.lock.json before this change could not replay. ` +
        `Fix: ${guard}; or pass --accept-breaking when no runs of ${w} are in flight.`;
    const change: BreakingChange = { workflow: w, step: subject, kind: finishedOnly ? "after-last-wait" : kind, at, message };
    const key = `${change.kind}\u0000${change.step}\u0000${formatLocation(change.at)}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.breaking.push(change);
  }
}

function renaming(old: Leaf, next: Leaf): string {
  if (old.kind === "step" && next.kind === "step") return `step "${old.name}" was renamed to "${next.name}"`;
  if (old.kind === "call" && next.kind === "call" && old.call === "child" && next.call === "child")
    return `the ID of child workflow "${old.name}" changed to "${next.name}"`;
  return `${describeLeaf(old)} was replaced by ${describeLeaf(next)}`;
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

/**
 * The question whether a step's recorded result still fits its new result type. Arguments are not
 * asked about: the journal records no argument, so their types cannot break a replay.
 */
function typePair(step: StepIR, old: LockSignature): TypePair {
  const recorded = typeShape(old.result);
  // A type a dependency declares is recorded by name; a lock written before that holds its structure.
  const target = recorded === step.result.shape ? recorded : (step.result.structure ?? step.result.shape);
  const questions = [{ source: recorded, target }];
  // A class with methods is rebuilt from plain recorded data only when it was the recorded type already.
  if ((step.resultMethods ?? []).length > 0 && typeText(old.result) !== step.result.display)
    questions.push({ source: "string", target: "never" });
  return { step, old, questions: questions.filter((q) => q.source !== q.target) };
}

/** A name as it may appear in a patch ID: no `${…}`, no spaces or quotes. */
export function slug(name: string): string {
  return (
    name
      .replace(/\$\{…\}/g, "x")
      .replace(/[^A-Za-z0-9_.-]+/g, "-")
      .replace(/^-+|-+$/g, "") || "change"
  );
}

export function describeEntry(entry: string): string {
  if (entry === "run") return "run()";
  const [kind, ...name] = entry.split(":");
  return `${kind} handler "${name.join(":")}"`;
}
