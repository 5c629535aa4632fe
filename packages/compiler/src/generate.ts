import { performance } from "node:perf_hooks";
import { checkCompatibility } from "./compatibility.js";
import { type GenerateOptions, resolveConfig } from "./config.js";
import { emitClient } from "./emit-client.js";
import { emitWorkflowTypes } from "./emit-workflow-types.js";
import { type BreakingChange, BreakingChangeError, SourceError, type SourceProblem } from "./errors.js";
import type { ProjectIR } from "./ir.js";
import { buildLock, formatLock } from "./lock.js";
import { Session } from "./session.js";
import { readIfExists, writeIfChanged } from "./write-file.js";

/** One output of `fusee gen` and what happened to it. */
export interface GeneratedFile {
  readonly path: string;
  readonly kind: "client" | "workflows" | "lock";
  /** `written`/`unchanged` when generating; `current`/`stale` with `check`. */
  readonly status: "written" | "unchanged" | "current" | "stale";
}

/** A workflow found in the project, as the command line lists it. */
export interface WorkflowSummary {
  readonly type: string;
  readonly className: string;
  readonly file: string;
  readonly line: number;
  readonly steps: number;
  readonly signals: number;
  readonly queries: number;
  readonly updates: number;
  readonly patches: readonly string[];
}

export interface GenerateResult {
  /** False only with `check`, when a file is stale or a breaking or possibly breaking change is present. */
  readonly ok: boolean;
  readonly check: boolean;
  readonly workflows: readonly WorkflowSummary[];
  readonly files: readonly GeneratedFile[];
  /**
   * With `check`: the breaking changes found; with `acceptBreaking`: the ones recorded anyway. Those of
   * kind `after-last-wait` reach finished runs only; they are reported always and block nothing.
   */
  readonly breaking: readonly BreakingChange[];
  /**
   * Changes that break the runs in flight that took some path only (a branch, a loop that ran): each
   * names in `condition` what decides it. They fail a check less surely than `breaking`, with an
   * exit code of their own, and never stop `fusee gen` from writing.
   */
  readonly possiblyBreaking: readonly BreakingChange[];
  /** Compatible changes against the lock, one line each. */
  readonly changes: readonly string[];
  readonly durationMs: number;
  /** The intermediate form the files were emitted from. */
  readonly ir: ProjectIR;
}

/**
 * Finds every `@Workflow` class of a TypeScript project, writes the typed client, the worker type
 * table and fusee.lock.json, each only when its content changes. Refuses (throwing
 * {@link BreakingChangeError}, writing nothing) to record a change runs under the lock could not
 * replay, unless `acceptBreaking` is set. With `check`, writes nothing and reports.
 *
 * @example
 * const result = await generate({ project: "." });
 * for (const f of result.files) console.log(f.status, f.path);
 */
export async function generate(options: GenerateOptions): Promise<GenerateResult> {
  const session = new Session(resolveConfig(options));
  return runGeneration(session, options);
}

/** One generation over an already loaded project (shared by {@link generate} and the watcher). */
export function runGeneration(session: Session, options: Pick<GenerateOptions, "check" | "acceptBreaking">): GenerateResult {
  const started = performance.now();
  const { config } = session;
  const ir = session.analyze();
  const problems: SourceProblem[] = [];
  const client = emitClient(ir, config.out, problems);
  const workflowTypes = emitWorkflowTypes(ir, config.workflowsOut, problems);
  if (problems.length > 0) throw new SourceError(unique(problems));
  const lock = buildLock(ir);
  const report = checkCompatibility(session.readLock(), ir, lock, session.compatibility);
  const outputs = [
    { path: config.out, kind: "client", content: client },
    { path: config.workflowsOut, kind: "workflows", content: workflowTypes },
    { path: config.lock, kind: "lock", content: formatLock(lock) },
  ] as const;
  const check = options.check === true;
  // Changes that reach finished runs only are reported, and never block: the user decides.
  const blocking = report.breaking.filter((b) => b.kind !== "after-last-wait");
  if (!check && blocking.length > 0 && options.acceptBreaking !== true) throw new BreakingChangeError(blocking);
  const files: GeneratedFile[] = outputs.map(({ path, kind, content }) => {
    if (check) return { path, kind, status: readIfExists(path) === content ? "current" : "stale" };
    return { path, kind, status: writeIfChanged(path, content) ? "written" : "unchanged" };
  });
  return {
    ok: !check || (blocking.length === 0 && report.possiblyBreaking.length === 0 && files.every((f) => f.status === "current")),
    check,
    workflows: ir.workflows.map((w) => ({
      type: w.typeName,
      className: w.className,
      file: w.at.file,
      line: w.at.line,
      steps: w.steps.length,
      signals: w.signals.length,
      queries: w.queries.length,
      updates: w.updates.length,
      patches: w.patches.map((p) => p.id),
    })),
    files,
    breaking: report.breaking,
    possiblyBreaking: report.possiblyBreaking,
    changes: report.changes,
    durationMs: performance.now() - started,
    ir,
  };
}

function unique(problems: readonly SourceProblem[]): SourceProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.code}\u0000${p.at.file}:${p.at.line}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
