import type { BreakingChange } from "./errors.js";
import { formatLocation } from "./errors.js";
import type { ProjectIR } from "./ir.js";
import { entryText, type Lock, type LockWorkflow, typeShape, typeText } from "./lock.js";
import type { TypeCompatibility } from "./type-compat.js";
import { describeEntry, type Severity, type TypePair, WorkflowDiff } from "./workflow-diff.js";

/** What changed between the lock and the code. */
export interface CompatibilityReport {
  /** Changes runs recorded under the lock could not replay, whatever path they took (and those reaching finished runs only, of kind `after-last-wait`). */
  readonly breaking: readonly BreakingChange[];
  /** Changes that break runs in flight on some paths only, each naming the condition. */
  readonly possiblyBreaking: readonly BreakingChange[];
  /** Every other change the new lock records, one line each (`workflow Ship added`, ...). */
  readonly changes: readonly string[];
}

/**
 * Compares the code with the lock by replaying every recorded path of each entry point with the new
 * code (see `WorkflowDiff`), and checks that results runs in flight hold still fit the new result
 * types, that enums keep their values, and that no recorded workflow is gone.
 */
export function checkCompatibility(lock: Lock | undefined, ir: ProjectIR, next: Lock, types: TypeCompatibility): CompatibilityReport {
  if (lock === undefined)
    return { breaking: [], possiblyBreaking: [], changes: ir.workflows.map((w) => `workflow ${w.typeName} recorded`) };
  const breaking: BreakingChange[] = [];
  const possiblyBreaking: BreakingChange[] = [];
  const changes: string[] = [];
  const pending: { diff: WorkflowDiff; pair: TypePair }[] = [];
  for (const [name, old] of Object.entries(lock.workflows)) {
    const current = ir.workflows.find((w) => w.typeName === name);
    if (current === undefined) {
      const at = { file: old.file, line: 1 };
      const renamed = ir.workflows.find((w) => w.className !== name && w.at.file === old.file && lock.workflows[w.typeName] === undefined);
      breaking.push({
        workflow: name,
        step: name,
        kind: "workflow-removed",
        at,
        message: renamed
          ? `Workflow ${name} (${formatLocation(at)}): no workflow is called ${name} any more (class ${renamed.className} in ${formatLocation(renamed.at)} is new and is called ${renamed.typeName}), so runs of ${name} recorded in fusee.lock.json could not continue. Fix: if ${renamed.className} is ${name} renamed, keep the type name with @Workflow("${name}") on it; or pass --accept-breaking when no runs of ${name} are in flight.`
          : `Workflow ${name} (${formatLocation(at)}): the workflow was removed, so its runs recorded in fusee.lock.json could not continue. Fix: keep the class until none of its runs are in flight, or pass --accept-breaking when no runs of ${name} are in flight.`,
      });
      continue;
    }
    // An entry recorded exactly as the code now reads has nothing to compare.
    const now = next.workflows[name];
    if (now !== undefined && entryText(old) === entryText(now)) continue;
    const diff = new WorkflowDiff(old, current, lock.version);
    diff.run();
    breaking.push(...diff.breaking);
    possiblyBreaking.push(...diff.possiblyBreaking);
    changes.push(...diff.notes);
    for (const pair of diff.typePairs()) {
      const readsMore = (pair.step.resultMethods ?? []).length > 0 || (pair.step.resultUse?.asserted ?? []).length > 0;
      if (pair.question.source !== pair.question.target || readsMore) pending.push({ diff, pair });
    }
  }
  const fits = types.check(pending.map(({ pair }) => pair.question));
  const misfits = pending.filter((_, i) => fits[i] !== true);
  const overlaps = types.overlap(misfits.map(({ pair }) => pair.question));
  pending.forEach(({ diff, pair }, i) => {
    const judged = judgeType(pair, fits[i] === true, overlaps[misfits.findIndex((m) => m.pair === pair)] === true);
    if (judged === undefined) return;
    const severity: Severity = pair.inFlight ? judged.severity : "finished-only";
    const change = diff.typeChanged(pair, severity, judged.why);
    (severity === "possibly-breaking" ? possiblyBreaking : breaking).push(change);
  });
  for (const [name, entry] of Object.entries(next.workflows)) {
    const old = lock.workflows[name];
    if (old === undefined) changes.push(`workflow ${name} added`);
    else if (entryText(old) !== entryText(entry)) changes.push(...describeChanges(name, old, entry));
  }
  return { breaking, possiblyBreaking, changes };
}

/**
 * Whether recorded results of a step still serve the code, and how surely not. Values that fit the
 * new type serve, unless the result became a class with methods that plain recorded values lack, or
 * the code asserts a field they lack; values that do not fit serve when the code only converts them
 * (`String(r)`, `BigInt(r)`), break some runs when the types overlap (a narrower type), all otherwise.
 */
function judgeType(pair: TypePair, fits: boolean, overlaps: boolean): { severity: Severity; why: string } | undefined {
  const { step, old } = pair;
  const methods = step.resultMethods ?? [];
  if (methods.length > 0 && typeText(old.result) !== step.result.display)
    return {
      severity: "breaking",
      why: `; it is now class ${step.result.display}, whose members (${methods.join(", ")}) recorded plain values do not have`,
    };
  const lacking = (step.resultUse?.asserted ?? []).filter(
    (field) => !new RegExp(`(^|[{;] )${escape(field)}: `).test(typeShape(old.result)),
  );
  if (lacking.length > 0)
    return {
      severity: "breaking",
      why: `; the code reads ${lacking.map((f) => `${f}!`).join(", ")}, which values recorded under the old type lack`,
    };
  if (fits || step.resultUse?.converted === true) return undefined;
  return overlaps ? { severity: "possibly-breaking", why: "" } : { severity: "breaking", why: "" };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
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
    if (entry in old.paths && !same(old.paths[entry], next.paths[entry]))
      out.push(`${name}: step order of ${describeEntry(entry)} changed`);
  }
  if (old.class !== next.class || old.file !== next.file) out.push(`${name}: now class ${next.class} in ${next.file}`);
  return out;
}
