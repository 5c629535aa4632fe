import { ts } from "ts-morph";
import type { WorkflowClass } from "./analyze-workflow.js";
import { decoratorCallee } from "./decorator-syntax.js";
import type { RuntimeSymbols } from "./runtime-symbols.js";

/**
 * Finds the top-level classes decorated with the runtime's `@Workflow` in one file. The decorator is
 * recognised by its symbol, so `import { Workflow as W }` and re-exports through a project barrel
 * count, and a function called `Workflow` from anywhere else does not.
 */
export function discoverWorkflows(file: ts.SourceFile, runtime: RuntimeSymbols): WorkflowClass[] {
  const found: WorkflowClass[] = [];
  for (const statement of file.statements) {
    if (!ts.isClassDeclaration(statement)) continue;
    for (const decorator of ts.getDecorators(statement) ?? []) {
      if (runtime.exportAt(decoratorCallee(decorator)) === "Workflow") {
        found.push({ declaration: statement, decorator });
        break;
      }
    }
  }
  return found;
}

/** Whether a file may declare workflows: project source, not declarations, dependencies or generated output. */
export function isCandidateFile(
  file: ts.SourceFile,
  isExternal: (file: ts.SourceFile) => boolean,
  generated: ReadonlySet<string>,
): boolean {
  if (file.isDeclarationFile || isExternal(file)) return false;
  if (generated.has(file.fileName)) return false;
  // A file without an `@` has no decorator; skipping it spares the checker.
  return file.text.includes("@");
}
