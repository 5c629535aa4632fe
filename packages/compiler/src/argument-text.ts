import { createHash } from "node:crypto";
import { ts } from "ts-morph";
import { enclosingFunction, type Env, type Evaluator, jsonOf } from "./known-values.js";

/** Aliases read through before giving up: `const a = b; const b = c; ...`. */
const MAX_DEPTH = 6;

/**
 * Writes expressions the way two versions of the code are compared. Step arguments: a value gen can
 * compute as its JSON (what the step argument fingerprint hashes), the rest as source text in which
 * locals are what the reader knows of them (how they were computed, a conditional where branches set
 * them apart), a step's result is `result("name")`, enum members are their values, string building
 * (`"id-" + String(n)`, a template) is written one way, and a call of a function or method of the
 * project carries a digest of its body, so changing the body changes the text. Conditions: as written, with
 * locals of known value as their value, `const` aliases of plain values read through, and
 * `ctx.patched(id)` answers (also through a constant) named as such.
 */
export class ExpressionText {
  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly evaluator: Evaluator,
    /** The body of a function or method of the project a call resolves to, other than a step. */
    private readonly helperBody: (call: ts.CallExpression) => ts.Node | undefined,
    /** The patch ID of a `ctx.patched(id)` call. */
    private readonly patchedId: (call: ts.CallExpression) => string | undefined,
    /** The step name of a step call (a `@Step` method, `ctx.step`). */
    private readonly stepOf: (call: ts.CallExpression) => string | undefined,
  ) {}

  /** A step call's arguments, as the lock records them. */
  arguments(args: readonly ts.Expression[], env: Env): string {
    return args.map((a) => this.text(a, env, 0, true)).join(", ");
  }

  /** One value as step arguments read it, for a variable that holds it. */
  value(e: ts.Expression, env: Env): string {
    return this.text(e, env, 0, true);
  }

  /** A condition, as its atoms are compared. */
  condition(e: ts.Node, env: Env): string {
    return this.text(e, env, 0, false);
  }

  private text(node: ts.Node, env: Env, depth: number, argument: boolean): string {
    if (ts.isExpression(node)) {
      if (argument) {
        const known = this.evaluator.value(node, env);
        if (known.known) return jsonOf(known.value);
        if (
          ts.isParenthesizedExpression(node) ||
          ts.isAsExpression(node) ||
          ts.isNonNullExpression(node) ||
          ts.isSatisfiesExpression(node) ||
          ts.isAwaitExpression(node)
        )
          return this.text(node.expression, env, depth, argument);
      }
      if (ts.isIdentifier(node)) {
        const local = env.get(this.evaluator.symbolOf(node));
        if (local?.kind === "value") return jsonOf(local.value);
        if (argument && local?.kind === "symbolic") return local.text;
        if (argument && local?.kind === "awaited") return this.text(local.node, env, depth + 1, argument);
      }
      if (ts.isIdentifier(node) && depth < MAX_DEPTH) {
        // Constants of a module read the same anywhere; a local one is known through what the reader tracked.
        const initializer = constInitializer(this.evaluator.symbolOf(node));
        if (
          initializer !== undefined &&
          ((argument && enclosingFunction(initializer) === undefined) ||
            isPlainValue(initializer) ||
            this.patchedCall(initializer) !== undefined)
        )
          return this.text(initializer, env, depth + 1, argument);
      }
      if (ts.isCallExpression(node)) {
        const id = this.patchedId(node);
        if (id !== undefined) return `ctx.patched(${JSON.stringify(id)})`;
        if (argument) {
          // A step's result replays as recorded for the call the journal matched: its own arguments are checked there.
          const step = this.stepOf(node);
          if (step !== undefined) return `result(${JSON.stringify(step)})`;
          const body = this.helperBody(node);
          if (body !== undefined) {
            const callee = node.expression
              .getText()
              .replace(/^this\./, "")
              .replace(/[^\w$.]/g, "");
            return `${callee}$${digest(body)}(${node.arguments.map((a) => this.text(a, env, depth, argument)).join(", ")})`;
          }
        }
      }
      const pieces = argument ? this.stringPieces(node) : undefined;
      if (pieces !== undefined) {
        return `\`${pieces
          .map((p) => (typeof p === "string" ? p.replace(/[`\\$]/g, (c) => `\\${c}`) : `\${${this.text(p, env, depth, argument)}}`))
          .join("")}\``;
      }
    }
    // Anything else: its source with each part written as above.
    const source = node.getSourceFile().text;
    let out = "";
    let at = node.getStart();
    node.forEachChild((child) => {
      out += source.slice(at, child.getStart());
      out += this.text(child, env, depth, argument);
      at = child.getEnd();
    });
    out += source.slice(at, node.getEnd());
    return out.replace(/\s+/g, " ").trim();
  }

  private patchedCall(e: ts.Expression): string | undefined {
    return ts.isCallExpression(e) ? this.patchedId(e) : undefined;
  }

  /** The literal pieces and the converted expressions of a string built with `+`, a template or `String()`; undefined for other expressions. */
  private stringPieces(e: ts.Expression): (string | ts.Expression)[] | undefined {
    const isString = (x: ts.Expression) => (this.checker.getTypeAtLocation(x).flags & ts.TypeFlags.StringLike) !== 0;
    if (!isString(e)) return undefined;
    const out: (string | ts.Expression)[] = [];
    const add = (x: ts.Expression): void => {
      if (ts.isParenthesizedExpression(x)) return add(x.expression);
      if (ts.isStringLiteral(x) || ts.isNoSubstitutionTemplateLiteral(x)) {
        out.push(x.text);
        return;
      }
      if (ts.isTemplateExpression(x)) {
        out.push(x.head.text);
        for (const span of x.templateSpans) {
          add(span.expression);
          out.push(span.literal.text);
        }
        return;
      }
      if (ts.isBinaryExpression(x) && x.operatorToken.kind === ts.SyntaxKind.PlusToken && isString(x)) {
        add(x.left);
        add(x.right);
        return;
      }
      if (ts.isCallExpression(x) && ts.isIdentifier(x.expression) && x.expression.text === "String" && x.arguments.length === 1) {
        add(x.arguments[0] as ts.Expression);
        return;
      }
      out.push(x);
    };
    if (!(
      ts.isTemplateExpression(e) ||
      (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) ||
      ts.isCallExpression(e)
    ))
      return undefined;
    if (ts.isCallExpression(e) && !(ts.isIdentifier(e.expression) && e.expression.text === "String")) return undefined;
    add(e);
    // Adjacent literal pieces are one piece, and empty ones none.
    const merged: (string | ts.Expression)[] = [];
    for (const p of out) {
      const last = merged[merged.length - 1];
      if (typeof p === "string" && typeof last === "string") merged[merged.length - 1] = last + p;
      else if (p !== "") merged.push(p);
    }
    return merged;
  }
}

/** The initializer of a local `const` (not a destructuring, not a function), which stands for its name. */
function constInitializer(symbol: ts.Symbol | undefined): ts.Expression | undefined {
  const d = symbol?.valueDeclaration;
  if (d === undefined || !ts.isVariableDeclaration(d) || d.initializer === undefined || !ts.isIdentifier(d.name)) return undefined;
  if ((ts.getCombinedNodeFlags(d) & ts.NodeFlags.Const) === 0) return undefined;
  // A constant of a loop (`for (const x of xs)`) has no initializer; one declared in a loop body varies per iteration but is read in place.
  if (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer)) return undefined;
  return d.initializer;
}

/** A name, a property of one, or a literal: reading it twice gives the same value. */
function isPlainValue(e: ts.Expression): boolean {
  if (ts.isParenthesizedExpression(e)) return isPlainValue(e.expression);
  if (ts.isIdentifier(e) || ts.isStringLiteral(e) || ts.isNumericLiteral(e) || e.kind === ts.SyntaxKind.ThisKeyword) return true;
  return ts.isPropertyAccessExpression(e) && isPlainValue(e.expression);
}

/** A short digest of a body's text, white space aside. */
export function digest(node: ts.Node): string {
  return createHash("sha256").update(node.getText().replace(/\s+/g, " ")).digest("hex").slice(0, 8);
}
