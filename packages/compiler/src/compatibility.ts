import type { BreakingChange } from "./errors.js";
import { formatLocation } from "./errors.js";
import type { ProjectIR } from "./ir.js";
import { entryText, type Lock, type LockWorkflow } from "./lock.js";
import type { TypeCompatibility } from "./type-compat.js";
import { describeEntry, type TypePair, WorkflowDiff } from "./workflow-diff.js";

/** What changed between the lock and the code. */
export interface CompatibilityReport {
  /** Changes runs recorded under the lock could not replay. */
  readonly breaking: readonly BreakingChange[];
  /** Changes that break runs in flight on some paths only, each naming the condition. */
  readonly possiblyBreaking: readonly BreakingChange[];
  /** Every other change the new lock records, one line each (`workflow Ship added`, ...). */
  readonly changes: readonly string[];
}

/**
 * Compares the code with the lock, path by path. Steps are matched in order (a longest common
 * subsequence per sequence, branches arm by arm, loops body to body); what is left over was
 * inserted, removed, renamed or reordered. A `ctx.patched(id)` branch new to a sequence stands for
 * its `else` arm, the code that runs recorded before it take, so steps added in its patched arm
 * are compatible. Matched steps must keep types that recorded values still fit.
 */
export function checkCompatibility(lock: Lock | undefined, ir: ProjectIR, next: Lock, types: TypeCompatibility): CompatibilityReport {
  if (lock === undefined) return { breaking: [], possiblyBreaking: [], changes: ir.workflows.map((w) => `workflow ${w.typeName} recorded`) };
  const breaking: BreakingChange[] = [];
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
    changes.push(...diff.notes);
    for (const pair of diff.typePairs()) pending.push({ diff, pair });
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
  return { breaking, possiblyBreaking: [], changes };
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
