import { relative, sep } from "node:path";
import type { ts } from "ts-morph";
import type { SourceLocation } from "./ir.js";

/** Locates a node as a project-relative POSIX path and a 1-based line. */
export function locate(projectDir: string, node: ts.Node): SourceLocation {
  const file = node.getSourceFile();
  const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
  return { file: projectPath(projectDir, file.fileName), line: line + 1 };
}

/** A path relative to the project folder with `/` separators, as messages and the lock show it. */
function projectPath(projectDir: string, fileName: string): string {
  return relative(projectDir, fileName).split(sep).join("/");
}
