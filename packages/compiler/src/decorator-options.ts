import { ts } from "ts-morph";
import { constantString, decoratorArgument, property } from "./decorator-syntax.js";
import type { SourceProblemCode } from "./errors.js";
import type { SourceLocation, ValueRef } from "./ir.js";
import type { AnalysisContext } from "./analysis-context.js";

/** Where the reading of a workflow's source reports what it refuses, and how it names a place. */
export interface SourceReport {
  locate(node: ts.Node): SourceLocation;
  problem(code: SourceProblemCode, node: ts.Node, message: string): void;
}

/** What `@Workflow(...)` says: the type name, and the patch IDs if the workflow declares them. */
export interface WorkflowOptions {
  typeName: string;
  patches: { id: string; at: SourceLocation }[];
  declaresPatches: boolean;
}

/** Reads the argument of `@Workflow`: a name, or an object literal with `name` and `patches`. */
export function workflowOptions(
  checker: ts.TypeChecker,
  decorator: ts.Decorator,
  className: string,
  report: SourceReport,
): WorkflowOptions {
  const argument = decoratorArgument(decorator);
  let typeName = className;
  const patches: { id: string; at: SourceLocation }[] = [];
  if (argument === undefined) return { typeName, patches, declaresPatches: false };
  const direct = constantString(checker, argument);
  if (direct !== undefined) return { typeName: direct, patches, declaresPatches: false };
  if (!ts.isObjectLiteralExpression(argument)) {
    report.problem(
      "FUSEE_GEN_INVALID_WORKFLOW",
      argument,
      `@Workflow on ${className} takes a string literal or an object literal, so fusee gen can read it. Fix: write the name or options inline.`,
    );
    return { typeName, patches, declaresPatches: false };
  }
  const name = property(argument, "name");
  if (name !== undefined) {
    const value = constantString(checker, name);
    if (value === undefined)
      report.problem(
        "FUSEE_GEN_INVALID_WORKFLOW",
        name,
        `The name of workflow ${className} must be a string literal. Fix: write it inline.`,
      );
    else typeName = value;
  }
  const list = property(argument, "patches");
  if (list !== undefined) {
    const elements = ts.isArrayLiteralExpression(list) ? [...list.elements] : undefined;
    if (elements !== undefined) {
      for (const element of elements) {
        const id = constantString(checker, element);
        if (id === undefined)
          report.problem(
            "FUSEE_GEN_INVALID_WORKFLOW",
            element,
            `Patch IDs of workflow ${typeName} must be string literals. Fix: write them inline.`,
          );
        else if (!patches.some((p) => p.id === id)) patches.push({ id, at: report.locate(element) });
      }
    } else {
      const type = checker.getTypeAtLocation(list);
      const ids = checker.isTupleType(type)
        ? checker.getTypeArguments(type as ts.TypeReference).map((t) => (t.isStringLiteral() ? t.value : undefined))
        : [undefined];
      if (ids.some((id) => id === undefined)) {
        report.problem(
          "FUSEE_GEN_INVALID_WORKFLOW",
          list,
          `Patch IDs of workflow ${typeName} must be string literals (an array literal or an \`as const\` tuple). Fix: write them inline.`,
        );
      }
      for (const id of ids) if (id !== undefined && !patches.some((p) => p.id === id)) patches.push({ id, at: report.locate(list) });
    }
  }
  return { typeName, patches, declaresPatches: list !== undefined };
}

/** The `type` option of `@Step`: the class the step's result is rebuilt with. */
export function stepTypeOption(
  context: AnalysisContext,
  decorator: ts.Decorator | undefined,
  owner: string,
  report: SourceReport,
): ValueRef | undefined {
  const argument = decorator === undefined ? undefined : decoratorArgument(decorator);
  const option = argument !== undefined && ts.isObjectLiteralExpression(argument) ? property(argument, "type") : undefined;
  if (option === undefined) return undefined;
  const symbol = context.checker.getSymbolAtLocation(option);
  const target = symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias ? context.checker.getAliasedSymbol(symbol) : symbol;
  if (target === undefined || !(target.flags & ts.SymbolFlags.Class)) {
    report.problem(
      "FUSEE_GEN_INVALID_WORKFLOW",
      option,
      `@Step({ type }) on ${owner} must name a class. Fix: pass the class the result is rebuilt with.`,
    );
    return undefined;
  }
  return { kind: "class", ref: context.types.declRef(target) };
}

/** The `name` option of a member's decorator, which must be a constant string. */
export function optionName(
  checker: ts.TypeChecker,
  decorator: ts.Decorator | undefined,
  owner: string,
  report: SourceReport,
): string | undefined {
  const argument = decorator === undefined ? undefined : decoratorArgument(decorator);
  if (argument === undefined || !ts.isObjectLiteralExpression(argument)) return undefined;
  const name = property(argument, "name");
  if (name === undefined) return undefined;
  const value = constantString(checker, name);
  if (value === undefined) {
    report.problem("FUSEE_GEN_INVALID_WORKFLOW", name, `The name of ${owner} must be a string literal. Fix: write it inline.`);
  }
  return value;
}
