import { existsSync, statSync } from "node:fs";
import { FileSystemRefreshResult, Project, ts } from "ts-morph";
import type { AnalysisContext } from "./analysis-context.js";
import { analyzeWorkflow } from "./analyze-workflow.js";
import type { ResolvedConfig } from "./config.js";
import { discoverWorkflows, isCandidateFile } from "./discover.js";
import { FileOrigins } from "./file-origins.js";
import { genSourceFiles } from "./gen-sources.js";
import { GenConfigError, SourceError, type SourceProblem } from "./errors.js";
import type { ProjectIR, WorkflowIR } from "./ir.js";
import { type Lock, parseLock } from "./lock.js";
import { RUNTIME_PACKAGE, RuntimeSymbols } from "./runtime-symbols.js";
import { TypeCompatibility } from "./type-compat.js";
import { compare } from "./text-order.js";
import { TypeRenderer } from "./type-render.js";
import { readIfExists } from "./write-file.js";

/**
 * A loaded project: the ts-morph project read from tsconfig.json, kept between generations so a
 * watcher only re-reads the files that changed.
 */
export class Session {
  readonly project: Project;
  readonly compatibility = new TypeCompatibility();
  private readonly generated: Set<string>;
  private readonly origins = new FileOrigins();
  /** The files include/exclude select, computed again after files came or went. */
  private sources: Set<string> | undefined;
  private cache = new Map<string, FileAnalysis>();
  private lastLock: { text: string; lock: Lock } | undefined;

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
        if (file.refreshFromFileSystemSync() !== FileSystemRefreshResult.NoChange) changed = true;
      } else if (existsSync(path) && statSync(path).isFile()) {
        if (this.isIncluded(path)) {
          this.project.addSourceFileAtPath(path);
          this.sources = undefined;
          changed = true;
        }
      } else {
        // A folder was renamed, removed or replaced (a branch switch): re-read every file under it.
        for (const inner of this.project.getSourceFiles().filter((f) => f.getFilePath().startsWith(`${path}/`))) {
          if (inner.refreshFromFileSystemSync() !== FileSystemRefreshResult.NoChange) changed = true;
        }
        if (existsSync(path)) {
          for (const name of this.includedFiles().filter((f) => f.startsWith(`${path}/`) && this.project.getSourceFile(f) === undefined)) {
            this.project.addSourceFileAtPath(name);
            this.sources = undefined;
            changed = true;
          }
        }
      }
    }
    return changed;
  }

  /**
   * Builds the intermediate form of every workflow; throws {@link SourceError} listing every problem.
   * A file's workflows are read again only when the file or a file it imports (directly or not), or
   * a project file declaring globals, changed since the last analysis: nothing else can change them.
   */
  analyze(): ProjectIR {
    const program = this.project.getProgram().compilerObject;
    this.origins.observe(program);
    const isExternal = (file: ts.SourceFile) => this.origins.isExternal(file);
    const checker = program.getTypeChecker();
    const runtime = new RuntimeSymbols(checker);
    let context: AnalysisContext | undefined;
    // The project's own files; the program's roots also hold every dependency ts-morph loaded before.
    const own = new Set(this.project.getSourceFiles().map((f) => f.getFilePath() as string));
    this.sources ??= genSourceFiles(this.config);
    const sources = this.sources;
    const candidates = program
      .getSourceFiles()
      .filter((f) => own.has(f.fileName) && sources.has(f.fileName) && isCandidateFile(f, isExternal, this.generated));
    const ambient = program
      .getSourceFiles()
      .filter((f) => own.has(f.fileName) && !this.generated.has(f.fileName) && !isExternal(f) && declaresGlobals(f));
    const cache = new Map<string, FileAnalysis>();
    const workflows: WorkflowIR[] = [];
    const problems: SourceProblem[] = [];
    for (const file of candidates) {
      let entry = this.cache.get(file.fileName);
      if (entry === undefined || entry.file !== file || entry.deps.some((d) => program.getSourceFile(d.fileName) !== d)) {
        context ??= {
          projectDir: this.config.dir,
          checker,
          runtime,
          types: new TypeRenderer(program, checker, this.config.dir, runtime, isExternal),
          problems: [],
        };
        const first = context.problems.length;
        const found = discoverWorkflows(file, runtime).flatMap((w) => analyzeWorkflow(context as AnalysisContext, w) ?? []);
        entry = {
          file,
          deps: [...importClosure(checker, file, isExternal), ...ambient],
          workflows: found,
          problems: context.problems.slice(first),
        };
      }
      cache.set(file.fileName, entry);
      workflows.push(...entry.workflows);
      problems.push(...entry.problems);
    }
    this.cache = cache;
    if (workflows.length === 0) this.checkRuntimeResolves(program, candidates);
    checkUnique(workflows, problems);
    if (problems.length > 0) throw new SourceError(sortProblems(problems));
    return { dir: this.config.dir, workflows: workflows.sort((a, b) => compare(a.typeName, b.typeName)) };
  }

  /** No workflow found while files import the runtime: most likely it is not installed, which must not pass silently. */
  private checkRuntimeResolves(program: ts.Program, files: readonly ts.SourceFile[]): void {
    const importer = files.find((f) => f.text.includes(`"${RUNTIME_PACKAGE}"`) || f.text.includes(`'${RUNTIME_PACKAGE}'`));
    if (importer === undefined) return;
    const resolved = ts.resolveModuleName(RUNTIME_PACKAGE, importer.fileName, program.getCompilerOptions(), ts.sys).resolvedModule;
    if (resolved === undefined) {
      throw new GenConfigError(
        `${importer.fileName} imports ${RUNTIME_PACKAGE}, which cannot be resolved from the project, so no workflow can be recognised. Fix: install it (npm install ${RUNTIME_PACKAGE}) or correct the module settings of ${this.config.tsconfig}.`,
      );
    }
  }

  /** The lock on disk, parsed again only when its text changed. */
  readLock(): Lock | undefined {
    const text = readIfExists(this.config.lock);
    if (text === undefined) return undefined;
    if (this.lastLock?.text !== text) this.lastLock = { text, lock: parseLock(this.config.lock, text) };
    return this.lastLock.lock;
  }

  private isIncluded(path: string): boolean {
    return this.includedFiles().includes(path);
  }

  /** The files tsconfig.json includes now, read afresh since files come and go. */
  private includedFiles(): string[] {
    const parsed = ts.getParsedCommandLineOfConfigFile(
      this.config.tsconfig,
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: () => undefined,
      },
    );
    return (parsed?.fileNames ?? []).map(compilerPath);
  }
}

/** What one file contributed to the last analysis, and the files that analysis read. */
interface FileAnalysis {
  readonly file: ts.SourceFile;
  /** The project files it imports, directly or not, and those declaring globals. */
  readonly deps: readonly ts.SourceFile[];
  readonly workflows: readonly WorkflowIR[];
  readonly problems: readonly SourceProblem[];
}

/** The project files (not dependencies) a file imports, directly or through others. */
function importClosure(checker: ts.TypeChecker, root: ts.SourceFile, isExternal: (file: ts.SourceFile) => boolean): ts.SourceFile[] {
  const seen = new Set<ts.SourceFile>([root]);
  const queue = [root];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    for (const statement of file.statements) {
      const specifier =
        ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)
          ? statement.moduleSpecifier
          : ts.isImportEqualsDeclaration(statement) && ts.isExternalModuleReference(statement.moduleReference)
            ? statement.moduleReference.expression
            : undefined;
      if (specifier === undefined) continue;
      const target = checker.getSymbolAtLocation(specifier)?.valueDeclaration;
      if (target === undefined || !ts.isSourceFile(target) || seen.has(target) || isExternal(target)) continue;
      seen.add(target);
      queue.push(target);
    }
  }
  return [...seen];
}

/** Whether a file can change types elsewhere without being imported: a script, `declare global`, `declare module`. */
function declaresGlobals(file: ts.SourceFile): boolean {
  if (!ts.isExternalModule(file)) return true;
  return file.statements.some(
    (s) => ts.isModuleDeclaration(s) && (ts.isStringLiteral(s.name) || (s.flags & ts.NodeFlags.GlobalAugmentation) !== 0),
  );
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
      problems.push({
        code: "FUSEE_GEN_DUPLICATE_NAME",
        at: w.at,
        message: `Workflow type name "${w.typeName}" is also used by class ${sameType.className} (${sameType.at.file}:${sameType.at.line}). Fix: give one of them another name with @Workflow("...").`,
      });
    }
    const sameClass = byClass.get(w.className);
    if (sameClass !== undefined) {
      problems.push({
        code: "FUSEE_GEN_DUPLICATE_NAME",
        at: w.at,
        message: `Workflow class name ${w.className} is also used at ${sameClass.at.file}:${sameClass.at.line}; the generated ${w.className}Client would clash. Fix: rename one of the classes.`,
      });
    }
    byType.set(w.typeName, w);
    byClass.set(w.className, w);
  }
}

function sortProblems(problems: readonly SourceProblem[]): SourceProblem[] {
  return [...problems].sort((a, b) => compare(a.at.file, b.at.file) || a.at.line - b.at.line || compare(a.message, b.message));
}
