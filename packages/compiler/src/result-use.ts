import { ts } from "ts-morph";
import { enclosingFunction } from "./known-values.js";

/** Calls that read any value the same way: a recorded value of another type still converts. */
const CONVERSIONS = new Set(["String", "Number", "BigInt", "Boolean"]);

/**
 * How the code uses the result of one step call: `converted` when the result (directly, or every
 * read of the `const`/`let` it is stored in) goes into a conversion or a template, `asserted` the
 * fields it reads with a non-null assertion (`r.currency!`).
 */
export function resultUse(call: ts.CallExpression, checker: ts.TypeChecker): { converted: boolean; asserted: string[] } {
  const result = outermost(call);
  const asserted: string[] = [];
  assertedField(result, asserted);
  if (converts(result, checker)) return { converted: true, asserted };
  const parent = result.parent;
  if (!ts.isVariableDeclaration(parent) || parent.initializer !== result || !ts.isIdentifier(parent.name))
    return { converted: false, asserted };
  const symbol = checker.getSymbolAtLocation(parent.name);
  const scope = enclosingFunction(parent)?.body;
  if (symbol === undefined || scope === undefined) return { converted: false, asserted };
  const reads: ts.Node[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isIdentifier(n) && n !== parent.name && checker.getSymbolAtLocation(n) === symbol) reads.push(outermost(n));
    ts.forEachChild(n, visit);
  };
  visit(scope);
  for (const r of reads) assertedField(r, asserted);
  return { converted: reads.length > 0 && reads.every((r) => converts(r, checker)), asserted };
}

/** The expression around a node that stands for the same value: `await`, parentheses. */
function outermost(node: ts.Node): ts.Node {
  let n = node;
  while (ts.isAwaitExpression(n.parent) || ts.isParenthesizedExpression(n.parent)) n = n.parent;
  return n;
}

function converts(node: ts.Node, checker: ts.TypeChecker): boolean {
  const parent = node.parent;
  if (ts.isTemplateSpan(parent)) return true;
  if (!ts.isCallExpression(parent) || !parent.arguments.includes(node as ts.Expression)) return false;
  const callee = parent.expression;
  if (!ts.isIdentifier(callee) || !CONVERSIONS.has(callee.text)) return false;
  // Only the global functions: a project function of the same name reads values as it likes.
  const declaration = checker.getSymbolAtLocation(callee)?.declarations?.[0];
  return declaration === undefined || declaration.getSourceFile().isDeclarationFile;
}

/** `value.field!`: the field is read as if every value had it. */
function assertedField(value: ts.Node, out: string[]): void {
  const access = value.parent;
  if (
    ts.isPropertyAccessExpression(access) &&
    access.expression === value &&
    ts.isNonNullExpression(access.parent) &&
    !out.includes(access.name.text)
  )
    out.push(access.name.text);
}
