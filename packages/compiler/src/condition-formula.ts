import { ts } from "ts-morph";

/**
 * A branch condition as a formula over atoms: `&&`, `||` and `!` are read, anything else is an atom
 * known by its normalized text, so the same test written in both versions is one atom. An atom of
 * the form `ctx.patched("id")` is the answer of that patch call, not a fact about the run's data.
 */
export type Formula =
  | { readonly kind: "atom"; readonly text: string }
  | { readonly kind: "patched"; readonly id: string }
  | { readonly kind: "const"; readonly value: boolean }
  | { readonly kind: "not"; readonly of: Formula }
  | { readonly kind: "and" | "or"; readonly left: Formula; readonly right: Formula };

const cache = new Map<string, Formula>();

/** The formula of a condition's text, as the lock records it. */
export function formulaOf(text: string): Formula {
  let formula = cache.get(text);
  if (formula === undefined) {
    const file = ts.createSourceFile("condition.ts", `(${text});`, ts.ScriptTarget.ES2022, true);
    const statement = file.statements[0];
    formula = statement !== undefined && ts.isExpressionStatement(statement) ? read(statement.expression) : { kind: "atom", text };
    cache.set(text, formula);
  }
  return formula;
}

function read(e: ts.Expression): Formula {
  if (ts.isParenthesizedExpression(e)) return read(e.expression);
  if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.ExclamationToken) return negate(read(e.operand));
  if (e.kind === ts.SyntaxKind.TrueKeyword) return { kind: "const", value: true };
  if (e.kind === ts.SyntaxKind.FalseKeyword) return { kind: "const", value: false };
  if (ts.isBinaryExpression(e)) {
    const op = e.operatorToken.kind;
    if (op === ts.SyntaxKind.AmpersandAmpersandToken) return { kind: "and", left: read(e.left), right: read(e.right) };
    if (op === ts.SyntaxKind.BarBarToken) return { kind: "or", left: read(e.left), right: read(e.right) };
  }
  const patched = patchedId(e);
  if (patched !== undefined) return { kind: "patched", id: patched };
  const { text, negated } = atomText(e);
  const atom: Formula = { kind: "atom", text };
  return negated ? negate(atom) : atom;
}

function negate(f: Formula): Formula {
  if (f.kind === "not") return f.of;
  if (f.kind === "const") return { kind: "const", value: !f.value };
  return { kind: "not", of: f };
}

/** `ctx.patched("id")` or `this.ctx.patched("id")`, in any spacing. */
function patchedId(e: ts.Expression): string | undefined {
  if (!ts.isCallExpression(e) || e.arguments.length !== 1) return undefined;
  const callee = e.expression;
  const arg = e.arguments[0];
  if (!ts.isPropertyAccessExpression(callee) || callee.name.text !== "patched" || arg === undefined) return undefined;
  return ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg) ? arg.text : undefined;
}

/** An atom's text with comparisons written one way, so `a > b` and `b < a` are one atom. */
function atomText(e: ts.Expression): { text: string; negated: boolean } {
  if (ts.isBinaryExpression(e)) {
    const l = flat(e.left);
    const r = flat(e.right);
    switch (e.operatorToken.kind) {
      case ts.SyntaxKind.ExclamationEqualsEqualsToken:
        return { text: `${l} === ${r}`, negated: true };
      case ts.SyntaxKind.ExclamationEqualsToken:
        return { text: `${l} == ${r}`, negated: true };
      case ts.SyntaxKind.GreaterThanToken:
        return { text: `${r} < ${l}`, negated: false };
      case ts.SyntaxKind.GreaterThanEqualsToken:
        return { text: `${l} < ${r}`, negated: true };
      case ts.SyntaxKind.LessThanEqualsToken:
        return { text: `${r} < ${l}`, negated: true };
      default:
        break;
    }
  }
  return { text: flat(e), negated: false };
}

function flat(node: ts.Node): string {
  return node.getText().replace(/\s+/g, " ").trim();
}

/** The atoms of a formula that are facts about the run's data (not patch answers). */
export function atomsOf(f: Formula, out: Set<string> = new Set()): Set<string> {
  switch (f.kind) {
    case "atom":
      out.add(f.text);
      break;
    case "not":
      atomsOf(f.of, out);
      break;
    case "and":
    case "or":
      atomsOf(f.left, out);
      atomsOf(f.right, out);
      break;
    default:
      break;
  }
  return out;
}

/** The value of a formula, given its atoms' values and the answers of the patch calls made so far. */
export function evaluate(f: Formula, holds: (atom: string) => boolean, patched: (id: string) => boolean): boolean {
  switch (f.kind) {
    case "atom":
      return holds(f.text);
    case "patched":
      return patched(f.id);
    case "const":
      return f.value;
    case "not":
      return !evaluate(f.of, holds, patched);
    case "and":
      return evaluate(f.left, holds, patched) && evaluate(f.right, holds, patched);
    case "or":
      return evaluate(f.left, holds, patched) || evaluate(f.right, holds, patched);
  }
}
