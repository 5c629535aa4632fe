import { ts } from "ts-morph";
import { atomsOf, evaluate, formulaOf } from "./condition-formula.js";

/**
 * Step arguments gen records as a conditional (a variable the arms of a branch or a patch set
 * apart: `(ctx.patched("free")) ? ("free") : (result("charge"))`) are compared path by path: on
 * each, the conditional is the arm that path takes.
 */
export function argumentsOnPath(args: string, holds: (atom: string) => boolean, patched: (id: string) => boolean): string {
  if (!args.includes("?")) return args;
  const call = parse(args);
  if (call === undefined) return args;
  const resolve = (node: ts.Node): string => {
    let n = node;
    while (ts.isParenthesizedExpression(n) && ts.isConditionalExpression(n.expression)) n = n.expression;
    if (ts.isConditionalExpression(n)) {
      const taken = evaluate(formulaOf(n.condition.getText()), holds, patched) ? n.whenTrue : n.whenFalse;
      return resolve(ts.isParenthesizedExpression(taken) ? taken.expression : taken);
    }
    const source = n.getSourceFile().text;
    let out = "";
    let at = n.getStart();
    n.forEachChild((child) => {
      out += source.slice(at, child.getStart());
      out += resolve(child);
      at = child.getEnd();
    });
    return (out + source.slice(at, n.getEnd())).replace(/\s+/g, " ").trim();
  };
  return call.arguments.map(resolve).join(", ");
}

/** The condition atoms of the conditionals in recorded arguments: paths differ by them as by branches. */
export function argumentAtoms(args: string, into: Set<string>): void {
  if (!args.includes("?")) return;
  const call = parse(args);
  const visit = (n: ts.Node): void => {
    if (ts.isConditionalExpression(n)) atomsOf(formulaOf(n.condition.getText()), into);
    ts.forEachChild(n, visit);
  };
  if (call !== undefined) visit(call);
}

/**
 * Whether two argument lists surely have other values: another number of arguments, or at one
 * position two values (JSON) that differ. Other differences are in how they are written.
 */
export function certainlyDiffer(a: string, b: string): boolean {
  const x = parse(a)?.arguments.map((e) => e.getText());
  const y = parse(b)?.arguments.map((e) => e.getText());
  if (x === undefined || y === undefined) return true;
  if (x.length !== y.length) return true;
  return x.some((text, i) => text !== y[i] && isJson(text) && isJson(y[i] as string));
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function parse(args: string): ts.CallExpression | undefined {
  const file = ts.createSourceFile("arguments.ts", `f(${args});`, ts.ScriptTarget.ES2022, true);
  const statement = file.statements[0];
  return statement !== undefined && ts.isExpressionStatement(statement) && ts.isCallExpression(statement.expression)
    ? statement.expression
    : undefined;
}
