import type { BreakingChange } from "./errors.js";
import { formatLocation } from "./errors.js";
import type { SourceLocation, StepIR, WorkflowIR } from "./ir.js";
import { type LockSignature, type LockWorkflow, typeShape, typeText } from "./lock.js";
import { describeValue, NEVER_RECORDED, type Variable } from "./path-choices.js";
import { allNodes, describeLeaf, fromFlow, fromLock, type Leaf, leafName, type Node } from "./path-nodes.js";
import { type Difference, type PathOutcome, replayPaths } from "./path-replay.js";
import type { PathEvent } from "./path-walk.js";

/** A matched step whose recorded result must still fit the type the code now gives it. */
export interface TypePair {
  readonly step: StepIR;
  readonly old: LockSignature;
  /** Whether runs in flight hold a result of the step (it is recorded before a wait on some recorded path). */
  readonly inFlight: boolean;
  readonly question: { readonly source: string; readonly target: string };
}

type Kind = BreakingChange["kind"];

/** How surely a change breaks the runs in flight. */
export type Severity = "breaking" | "possibly-breaking" | "finished-only";

/**
 * Compares one workflow's recorded paths with the code's by replaying them: every way through the
 * recorded code of each entry point (each combination of its branch conditions, loop counts and
 * patch answers) is a journal, each point where it waits a run in flight, and the new code must ask
 * for that journal's records in order (see `replayPaths`). A change that breaks runs in flight on
 * every path is breaking; one that breaks them on some paths only is possibly breaking and names
 * the path; one that breaks only the replay of finished runs is reported as such.
 */
export class WorkflowDiff {
  readonly breaking: BreakingChange[] = [];
  readonly possiblyBreaking: BreakingChange[] = [];
  readonly notes: string[] = [];
  private readonly seen = new Set<string>();
  /** Step keys whose recorded results runs in flight may hold. */
  private readonly inFlightSteps = new Set<string>();

  constructor(
    private readonly old: LockWorkflow,
    readonly current: WorkflowIR,
    private readonly lockVersion: number,
  ) {}

  run(): void {
    const flows = new Map(this.current.flows.map((f) => [f.entry, f]));
    for (const [entry, oldNodes] of Object.entries(this.old.paths)) {
      const flow = flows.get(entry);
      const enums = enumReading(this.old.enums, this.current.enums);
      const old = enums.old(oldNodes.map(fromLock));
      const next = enums.next((flow?.nodes ?? []).flatMap((n) => fromFlow(n, this.lockVersion < 2)));
      this.entry(entry, old, next, flow?.at ?? this.current.at);
    }
    this.reusedPatches();
    this.enumShifts();
  }

  /** An enum member whose value changed: recorded values of it now read as another member, or as none. */
  private enumShifts(): void {
    for (const [name, members] of Object.entries(this.old.enums ?? {})) {
      const now = this.current.enums[name];
      if (now === undefined) continue;
      const moved = Object.entries(members).filter(([member, value]) => member in now && now[member] !== value);
      if (moved.length === 0) continue;
      const list = moved
        .map(([member, value]) => `${name}.${member} was ${JSON.stringify(value)} and is now ${JSON.stringify(now[member])}`)
        .join(", ");
      const w = this.current.typeName;
      const at = this.current.at;
      this.breaking.push({
        workflow: w,
        step: name,
        kind: "type-changed",
        at,
        message:
          `Workflow ${w}: members of enum ${name} changed values (${list}), so values runs recorded (step results, signals, arguments) now read as other members. ` +
          `Fix: give the members their old values explicitly (${moved.map(([member, value]) => `${member} = ${JSON.stringify(value)}`).join(", ")}) and new members values of their own; or pass --accept-breaking when no runs of ${w} are in flight.`,
      });
    }
  }

  private entry(entry: string, old: readonly Node[], next: readonly Node[], at: SourceLocation): void {
    const { variables, outcomes } = replayPaths(old, next, entry !== "run");
    for (const o of outcomes) for (const key of o.recordedInFlight) this.inFlightSteps.add(key);
    const inFlight = outcomes.filter((o) => o.waits);
    const failing = inFlight.filter((o) => o.inFlight !== undefined);
    // Runs started under the recorded code took each of its patches; only older runs did not.
    const started = inFlight.filter((o) => variables.every((v, i) => v.kind !== "patch" || o.values[i] === true));
    const context = { entry, at, old, next };
    if (started.length > 0 && started.every((o) => o.inFlight !== undefined)) {
      for (const o of started) this.report("breaking", o.inFlight as Difference, context);
    } else if (failing.length > 0) {
      const first = failing[0] as PathOutcome;
      const condition = nameCondition(variables, first, inFlight);
      for (const o of failing) this.report("possibly-breaking", o.inFlight as Difference, context, condition);
    } else if (inFlight.some((o) => o.maybeInFlight !== undefined)) {
      // Arguments written another way break the runs only if their values differ.
      for (const o of inFlight) {
        const d = o.maybeInFlight;
        if (d === undefined || d.holds?.kind !== "record" || d.asked?.kind !== "record") continue;
        const condition = `the arguments (${d.asked.leaf.kind === "step" ? (d.asked.leaf.args ?? "") : ""}) of step "${leafName(d.asked.leaf)}" differ in value from those recorded (${d.holds.leaf.kind === "step" ? (d.holds.leaf.args ?? "") : ""})`;
        this.report("possibly-breaking", d, context, condition);
      }
    } else {
      for (const o of outcomes) if (o.finished !== undefined) this.report("finished-only", o.finished, context);
    }
  }

  /** Steps of the lock still defined by the code: their recorded results must fit the new result types. */
  typePairs(): TypePair[] {
    const out: TypePair[] = [];
    for (const step of this.current.steps) {
      const recorded = this.old.steps[step.key];
      if (recorded === undefined) continue;
      const source = typeShape(recorded.result);
      // A type a dependency declares is recorded by name; a lock written before that holds its structure.
      const shape = source === step.result.shape ? source : (step.result.structure ?? step.result.shape);
      const target = optionalFields(shape, step.defaulted ?? []);
      out.push({
        step,
        old: recorded,
        inFlight: this.inFlightSteps.has(step.key),
        question: { source, target },
      });
    }
    return out;
  }

  private report(severity: Severity, d: Difference, context: DiffContext, condition?: string): void {
    const change = this.describe(d, context);
    const w = this.current.typeName;
    const where = describeEntry(context.entry);
    const id = slug(change.patchId);
    const guard =
      change.fix ??
      (change.kind === "inserted"
        ? `guard it with if (this.ctx.patched("${id}")) { ... }, declaring "${id}" in @Workflow({ patches })`
        : `put the new code in if (this.ctx.patched("${id}")) { ... } and keep the old calls in its else branch, declaring "${id}" in @Workflow({ patches })`);
    let message: string;
    if (severity === "finished-only") {
      message =
        `Workflow ${w}, ${where}: ${change.what}, after the last point where a run can wait, so no run in flight is affected, but finished runs no longer replay (queries and describe of runs kept by keepHistory). ` +
        `Fix: ${guard} if finished runs must stay readable; else nothing to do (fusee patches --data DIR shows which runs still need old code).`;
    } else if (severity === "possibly-breaking") {
      message =
        `Workflow ${w}, ${where}: ${change.what}. Runs in flight on a path where ${condition ?? "some condition holds"} could not replay; runs on the other paths do. ` +
        `Fix: ${guard}; or check the runs actually in flight with fusee gen --check --against DIR.`;
    } else {
      message =
        `Workflow ${w}, ${where}: ${change.what}. Runs recorded in fusee.lock.json before this change could not replay. ` +
        `Fix: ${guard}; or pass --accept-breaking when no runs of ${w} are in flight.`;
    }
    const kind: Kind = severity === "finished-only" ? "after-last-wait" : change.kind;
    const result: BreakingChange = {
      workflow: w,
      step: change.subject,
      kind,
      at: change.at,
      message,
      ...(condition === undefined ? {} : { condition }),
    };
    const key = `${severity}\u0000${kind}\u0000${change.subject}\u0000${formatLocation(change.at)}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    (severity === "possibly-breaking" ? this.possiblyBreaking : this.breaking).push(result);
  }

  /** What changed, from the first difference the replay met. */
  private describe(d: Difference, { at: entryAt, old, next }: DiffContext): Described {
    const asked = d.asked;
    const holds = d.holds;
    const at = locationOfEvent(asked) ?? d.next.map(locationOfEvent).find((l) => l !== undefined) ?? entryAt;
    const later = d.journal.slice(d.position + 1).map(eventName);
    const coming = d.next.slice(1).map(eventName);
    if (holds?.kind === "marker") {
      const nextIds = new Set(allNodes(next).flatMap((n) => (n.kind === "patch" || n.kind === "deprecated" ? [n.id] : [])));
      const oldIds = new Set(allNodes(old).flatMap((n) => (n.kind === "patch" ? [n.id] : [])));
      if (!nextIds.has(holds.id)) {
        const renamed = [...nextIds].find((id) => !oldIds.has(id));
        if (renamed !== undefined)
          return {
            kind: "patch-renamed",
            subject: holds.id,
            at,
            what: `patch ID "${holds.id}" was renamed to "${renamed}" (${formatLocation(at)}): runs that recorded the marker "${holds.id}" find no ctx.patched("${holds.id}") to answer it`,
            patchId: holds.id,
            fix: `keep the ID "${holds.id}" in ctx.patched() and in @Workflow({ patches }) while such runs are in flight`,
          };
        return {
          kind: "removed",
          subject: holds.id,
          at,
          what: `the guard ctx.patched("${holds.id}") was removed (near ${formatLocation(at)}). Every run that passed it recorded the marker "${holds.id}" and expects the guard there`,
          patchId: holds.id,
          fix: `keep the if/else on ctx.patched("${holds.id}") while such runs are in flight, then replace it with ctx.deprecatePatch("${holds.id}") followed by the patched code`,
        };
      }
      return {
        kind: "reordered",
        subject: holds.id,
        at,
        what: `ctx.patched("${holds.id}") is now called at another point (${formatLocation(at)}) than where runs recorded its marker`,
        patchId: `move-${holds.id}`,
        fix: `call ctx.patched("${holds.id}") where it was, keeping its answer in a variable if later code needs it`,
      };
    }
    if (asked?.kind === "wait") {
      return {
        kind: "inserted",
        subject: leafName(asked.leaf),
        at,
        what: `${describeLeaf(asked.leaf)} was inserted before calls runs recorded (${formatLocation(at)}), where their replay would stop`,
        patchId: `wait-${asked.leaf.on}`,
      };
    }
    if (asked === undefined || asked.kind !== "record") {
      const gone = holds?.kind === "record" ? holds.leaf : undefined;
      const name = gone === undefined ? "the journal" : leafName(gone);
      return {
        kind: "removed",
        subject: name,
        at,
        what: `${gone === undefined ? "a call" : describeLeaf(gone)} was removed (near ${formatLocation(at)})`,
        patchId: `remove-${name}`,
      };
    }
    const a = asked.leaf;
    if (holds === undefined || holds.kind !== "record") {
      return {
        kind: "inserted",
        subject: leafName(a),
        at,
        what: `${describeLeaf(a)} was inserted (${formatLocation(at)})`,
        patchId: `add-${leafName(a)}`,
      };
    }
    const h = holds.leaf;
    if (leafName(h) === leafName(a) && h.kind === "step" && a.kind === "step") {
      const swapped = later.includes(leafName(a));
      return {
        kind: swapped ? "reordered" : "arguments-changed",
        subject: a.name,
        at,
        what: swapped
          ? `calls of step "${a.name}" changed places: the call at ${formatLocation(at)} passes (${a.args ?? ""}) where runs recorded (${h.args ?? ""}), so replay would hand it another call's result`
          : `step "${a.name}" is now called with other arguments (${a.args ?? ""}) than runs recorded (${h.args ?? ""}) (${formatLocation(at)}); the journal keeps a fingerprint of a step's arguments, and replay stops where they differ`,
        patchId: swapped ? `reorder-${a.name}` : `args-${a.name}`,
      };
    }
    const heldLater = coming.includes(leafName(h));
    const askedLater = later.includes(leafName(a));
    if (heldLater && askedLater) {
      // The call the journal holds here is made later now: name it where it went.
      const moved = d.next.slice(1).find((e) => eventName(e) === leafName(h));
      const where = locationOfEvent(moved) ?? at;
      return {
        kind: "reordered",
        subject: leafName(h),
        at: where,
        what: `${describeLeaf(h)} was moved to another position (${formatLocation(where)})`,
        patchId: `reorder-${leafName(h)}`,
      };
    }
    if (askedLater)
      return {
        kind: "removed",
        subject: leafName(h),
        at,
        what: `${describeLeaf(h)} was removed (near ${formatLocation(at)})`,
        patchId: `remove-${leafName(h)}`,
      };
    if (heldLater)
      return {
        kind: "inserted",
        subject: leafName(a),
        at,
        what: `${describeLeaf(a)} was inserted (${formatLocation(at)})`,
        patchId: `add-${leafName(a)}`,
      };
    return {
      kind: "renamed",
      subject: leafName(h),
      at,
      what: `${renaming(h, a)} (${formatLocation(at)})`,
      patchId: `rename-${leafName(a)}`,
    };
  }

  /** A patch ID the lock records once that now guards a second change: it says nothing about the second. */
  private reusedPatches(): void {
    const recorded = new Set(this.old.patches);
    const uses = new Map<string, SourceLocation[]>();
    for (const use of this.current.patchUses) uses.set(use.id, [...(uses.get(use.id) ?? []), use.at]);
    const before = new Map<string, number>();
    for (const nodes of Object.values(this.old.paths))
      for (const n of allNodes(nodes.map(fromLock))) if (n.kind === "patch") before.set(n.id, (before.get(n.id) ?? 0) + 1);
    for (const [id, at] of uses) {
      // An ID no recorded path calls was recorded by no run, so it can guard as many changes as it likes.
      if (!recorded.has(id) || (before.get(id) ?? 0) === 0 || at.length <= (before.get(id) ?? 0) || at.length < 2) continue;
      const second = at[at.length - 1] as SourceLocation;
      this.notes.push(
        `${this.current.typeName}: patch ID "${id}", recorded for one change, now also guards another (${formatLocation(second)}); runs that passed the first guard take the second as patched too. Declare a new ID for the new change.`,
      );
    }
  }

  /** A step whose recorded results no longer fit its new result type. */
  typeChanged(pair: TypePair, severity: Severity, why: string): BreakingChange {
    const { step, old } = pair;
    const w = this.current.typeName;
    const shapes = `recorded shape ${typeShape(old.result)}, new shape ${step.result.shape}`;
    const fix = `keep the old step and call a new one (another name) in if (this.ctx.patched("${slug(step.name)}-v2")) { ... } else { ... } with "${slug(step.name)}-v2" declared in @Workflow({ patches }); or widen the type so old values still fit`;
    const head = `Workflow ${w}: the result type of step "${step.name}" changed from ${typeText(old.result)} to ${step.result.display} (${formatLocation(step.at)})${why}; ${shapes}.`;
    const message =
      severity === "finished-only"
        ? `${head} Only finished runs hold its results (it is called after the last point where a run can wait), so no run in flight is affected; finished runs may no longer replay. Fix: ${fix}, if finished runs must stay readable.`
        : severity === "possibly-breaking"
          ? `${head} Some values of the old type still fit the new one: runs in flight that recorded others could not go on. Fix: ${fix}; or check the runs actually in flight with fusee gen --check --against DIR.`
          : `${head} Values recorded under the old type do not fit the new one, so runs in flight could not replay. Fix: ${fix}; or pass --accept-breaking when no runs of ${w} are in flight.`;
    return {
      workflow: w,
      step: step.name,
      kind: severity === "finished-only" ? "after-last-wait" : "type-changed",
      at: step.at,
      message,
      ...(severity === "possibly-breaking"
        ? { condition: `the run recorded a result of step "${step.name}" that the new type does not admit` }
        : {}),
    };
  }
}

/**
 * Conditions and `switch` cases naming enum members, read as the members' values, so renaming a
 * member is no change; a member the recorded enum did not have (nor its value) is one no recorded
 * run can hold, so a case or test of it is never taken by them. Only when the lock recorded the
 * enums (locks written before it did are read as written).
 */
function enumReading(
  old: Readonly<Record<string, Readonly<Record<string, number | string>>>> | undefined,
  next: Readonly<Record<string, Readonly<Record<string, number | string>>>>,
): { old(nodes: readonly Node[]): Node[]; next(nodes: readonly Node[]): Node[] } {
  if (old === undefined) return { old: (n) => [...n], next: (n) => [...n] };
  const rewrite = (table: typeof next, isNew: boolean) => (text: string) =>
    text.replace(/\b([A-Za-z_$][\w$]*)\.([A-Za-z_$][\w$]*)\b/g, (whole, e: string, m: string) => {
      const members = table[e];
      if (members === undefined || !(m in members)) return whole;
      const value = members[m] as number | string;
      const before = old[e];
      if (isNew && before !== undefined && !(m in before) && !Object.values(before).includes(value)) return `${NEVER_RECORDED}.${e}.${m}`;
      return JSON.stringify(value);
    });
  const map =
    (f: (text: string) => string) =>
    (nodes: readonly Node[]): Node[] =>
      nodes.map((n) => mapNode(n, f));
  return { old: map(rewrite(old, false)), next: map(rewrite(next, true)) };
}

function mapNode(n: Node, f: (text: string) => string): Node {
  const map = (nodes: readonly Node[]) => nodes.map((x) => mapNode(x, f));
  switch (n.kind) {
    case "branch":
      return {
        ...n,
        arms: n.arms.map(map),
        ...(n.when === undefined ? {} : { when: f(n.when) }),
        ...(n.cases === undefined ? {} : { cases: n.cases.map((c) => (c === "default" ? c : f(c))) }),
      };
    case "patch":
      return { ...n, then: map(n.then), else: map(n.else) };
    case "loop":
      return { ...n, body: map(n.body) };
    case "try":
      return { ...n, body: map(n.body), catch: map(n.catch), finally: map(n.finally) };
    default:
      return n;
  }
}

interface DiffContext {
  readonly entry: string;
  readonly at: SourceLocation;
  readonly old: readonly Node[];
  readonly next: readonly Node[];
}

interface Described {
  readonly kind: Kind;
  readonly subject: string;
  readonly at: SourceLocation;
  readonly what: string;
  readonly patchId: string;
  readonly fix?: string;
}

/**
 * The path a possibly breaking change needs, in words: the values of the first failing path that,
 * changed alone, make a path that replays; or every value of that path when no one value does.
 */
function nameCondition(variables: readonly Variable[], failing: PathOutcome, inFlight: readonly PathOutcome[]): string {
  const passing = inFlight.filter((o) => o.inFlight === undefined);
  const deciding = variables.flatMap((v, i) => {
    const flipped = passing.some(
      (o) => o.values[i] !== failing.values[i] && o.values.every((value, j) => j === i || value === failing.values[j]),
    );
    return flipped ? [describeValue(v, failing.values[i] as boolean | string | number)] : [];
  });
  if (deciding.length > 0) return deciding.join(" and ");
  const all = variables.map((v, i) => describeValue(v, failing.values[i] as boolean | string | number));
  return all.length > 0 ? all.join(" and ") : "it took some path";
}

/** A structural shape with its top-level fields `fields` made optional (`{ a: T }` to `{ a?: T }`). */
function optionalFields(shape: string, fields: readonly string[]): string {
  if (fields.length === 0 || !shape.startsWith("{ ")) return shape;
  let depth = 0;
  let out = "";
  for (let i = 0; i < shape.length; i++) {
    const c = shape[i] as string;
    if ("{[(<".includes(c)) depth++;
    if ("}])>".includes(c)) depth--;
    out += c;
    const start = depth === 1 && (shape.startsWith("{ ", i) || shape.startsWith("; ", i));
    if (!start) continue;
    out += " ";
    i++;
    const name = /^[A-Za-z_$][\w$]*/.exec(shape.slice(i + 1))?.[0];
    if (name !== undefined && fields.includes(name) && shape.startsWith(": ", i + 1 + name.length)) {
      out += `${name}?`;
      i += name.length;
    }
  }
  return out;
}

function eventName(e: PathEvent): string {
  return e.kind === "marker" ? `marker:${e.id}` : leafName(e.leaf);
}

function locationOfEvent(e: PathEvent | undefined): SourceLocation | undefined {
  if (e === undefined) return undefined;
  return e.kind === "marker" ? e.at : e.leaf.at;
}

function renaming(old: Leaf, next: Leaf): string {
  if (old.kind === "step" && next.kind === "step") return `step "${old.name}" was renamed to "${next.name}"`;
  if (old.kind === "call" && next.kind === "call" && old.call === "child" && next.call === "child")
    return `the ID of child workflow "${old.name}" changed to "${next.name}"`;
  return `${describeLeaf(old)} was replaced by ${describeLeaf(next)}`;
}

/** A name as it may appear in a patch ID: no `${…}`, no spaces or quotes. */
function slug(name: string): string {
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
