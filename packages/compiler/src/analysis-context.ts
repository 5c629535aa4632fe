import type { ts } from "ts-morph";
import type { SourceProblem } from "./errors.js";
import type { RuntimeSymbols } from "./runtime-symbols.js";
import type { TypeRenderer } from "./type-render.js";

/** Shared state of one analysis pass over a project. */
export interface AnalysisContext {
  readonly projectDir: string;
  readonly checker: ts.TypeChecker;
  readonly runtime: RuntimeSymbols;
  readonly types: TypeRenderer;
  readonly problems: SourceProblem[];
}
