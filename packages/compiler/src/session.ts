import { existsSync } from "node:fs";
import { Project, ts } from "ts-morph";
import { analyzeWorkflow, type AnalysisContext } from "./analyze-workflow.js";
import type { ResolvedConfig } from "./config.js";
import { discoverWorkflows, isCandidateFile } from "./discover.js";
import { GenConfigError, SourceError, type SourceProblem } from "./errors.js";
import type { ProjectIR, WorkflowIR } from "./ir.js";
import { RuntimeSymbols } from "./runtime-symbols.js";
import { TypeCompatibility } from "./type-compat.js";
import { compare, TypeRenderer } from "./type-render.js";

/**
 * A loaded project: the ts-morph project read from tsconfig.json, kept between generations so a
 * watcher only re-reads the files that changed.
 */
export class Session {
  readonly project: Project;
  readonly compatibility = new TypeCompatibility();
  private readonly generated: Set<string>;

  constructor(readonly config: ResolvedConfig) {
    try {
      this.project = new Project({ tsConfigFilePath: config.tsconfig, skipFileDependencyResolution: true });
    } catch (e) {
      throw new GenConfigError(`Cannot read ${config.tsconfig}: ${(e as Error).message}. Fix: correct the tsconfig.`, { cause: e });
    }
    this.generated = new Set([config.out, config.workflowsOut].map(compilerPath));
  }

  /** Re-reads changed, added and deleted files; returns whether anything the analysis sees changed. */
  refresh(paths: Iterable<string>): boolean {
    let changed = false;
    for (const native of paths) {
      const path = compilerPath(native);
      if (this.generated.has(path)) continue;
      const file = this.project.getSourceFile(path);
      if (file !== undefined) {
        const result = file.refreshFromFileSystemSync();
        if (result !== 0) changed = true;
      } else if (existsSync(path) && this.isIncluded(path)) {
        this.project.addSourceFileAtPath(path);
        changed = true;
      }
    }
    return changed;
  }

  /** Builds the intermediate form of every workflow; throws {@link SourceError} listing every problem. */
  analyze(): ProjectIR {
    const program = this.project.getProgram().compilerObject;
    const checker = program.getTypeChecker();
    const runtime = new RuntimeSymbols(checker);
    const context: AnalysisContext = {
      projectDir: this.config.dir,
      checker,
      runtime,
      types: new TypeRenderer(program, checker, this.config.dir, runtime),
      problems: [],
    };
    const roots = new Set(program.getRootFileNames());
    const workflows: WorkflowIR[] = [];
    for (const file of program.getSourceFiles()) {
      if (!roots.has(file.fileName) || !isCandidateFile(program, file, this.generated)) continue;
      for (const found of discoverWorkflows(file, runtime)) {
        const workflow = analyzeWorkflow(context, found);
        if (workflow !== undefined) workflows.push(workflow);
      }
    }
    checkUnique(workflows, context.problems);
    if (context.problems.length > 0) throw new SourceError(sortProblems(context.problems));
    return { dir: this.config.dir, workflows: workflows.sort((a, b) => compare(a.typeName, b.typeName)) };
  }

  private isIncluded(path: string): boolean {
    const parsed = ts.getParsedCommandLineOfConfigFile(this.config.tsconfig, {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: () => undefined,
    });
    return parsed?.fileNames.some((f) => f === path) ?? false;
  }
}

/** File names as the compiler spells them: forward slashes on every platform. */
export function compilerPath(path: string): string {
  return path.replace(/\\/g, "/");
}

function checkUnique(workflows: readonly WorkflowIR[], problems: SourceProblem[]): void {
  const byType = new Map<string, WorkflowIR>();
  const byClass = new Map<string, WorkflowIR>();
  for (const w of workflows) {
    const sameType = byType.get(w.typeName);
    if (sameType !== undefined) {
      problems.push({ code: "FUSEE_GEN_DUPLICATE_NAME", at: w.at, message: `Workflow type name "${w.typeName}" is also used by class ${sameType.className} (${sameType.at.file}:${sameType.at.line}). Fix: give one of them another name with @Workflow("...").` });
    }
    const sameClass = byClass.get(w.className);
    if (sameClass !== undefined) {
      problems.push({ code: "FUSEE_GEN_DUPLICATE_NAME", at: w.at, message: `Workflow class name ${w.className} is also used at ${sameClass.at.file}:${sameClass.at.line}; the generated ${w.className}Client would clash. Fix: rename one of the classes.` });
    }
    byType.set(w.typeName, w);
    byClass.set(w.className, w);
  }
}

function sortProblems(problems: readonly SourceProblem[]): SourceProblem[] {
  return [...problems].sort((a, b) => compare(a.at.file, b.at.file) || a.at.line - b.at.line || compare(a.message, b.message));
}
