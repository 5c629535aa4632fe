import { ts } from "ts-morph";

/** A value gen can compute from the code alone: literals, arrays and plain objects of them. */
export type Value = number | string | boolean | bigint | null | undefined | readonly Value[] | { readonly [key: string]: Value };

/** A function declared in the body being read (`const f = () => ...`, `function f() {}`), followed where it is called. */
export interface LocalFunction {
  readonly kind: "function";
  readonly node: ts.ArrowFunction | ts.FunctionExpression | ts.FunctionDeclaration;
}

/** A parameter that stands for the awaited value of an expression (`.then((v) => ...)`'s `v`). */
export interface Awaited {
  readonly kind: "awaited";
  readonly node: ts.Expression;
}

/** A value gen cannot compute, known by how it is computed (`result(charge)`, a condition's arms): what step arguments compare. */
export interface Symbolic {
  readonly kind: "symbolic";
  readonly text: string;
}

type Known = { readonly kind: "value"; readonly value: Value } | LocalFunction | Awaited | Symbolic;

/** Symbolic texts longer than this are not kept: the variable is then known by its name only. */
const MAX_SYMBOLIC = 400;

/**
 * What the flow reader knows of the local variables at a point of a body: values computed from
 * literals (a loop counter, a constant list), and local functions. A variable written where gen
 * cannot tell the value (a step's result, an unknown branch) is forgotten, never guessed.
 */
export class Env {
  private constructor(private readonly known: Map<ts.Symbol, Known>) {}

  static empty(): Env {
    return new Env(new Map());
  }

  clone(): Env {
    return new Env(new Map(this.known));
  }

  get(symbol: ts.Symbol | undefined): Known | undefined {
    return symbol === undefined ? undefined : this.known.get(symbol);
  }

  set(symbol: ts.Symbol | undefined, value: Known | undefined): void {
    if (symbol === undefined) return;
    if (value === undefined) this.known.delete(symbol);
    else this.known.set(symbol, value);
  }

  forget(symbols: Iterable<ts.Symbol>): void {
    for (const s of symbols) this.known.delete(s);
  }

  /** Keeps what both branches of a fork agree on. */
  static merge(envs: readonly Env[]): Env {
    const [first, ...rest] = envs;
    if (first === undefined) return Env.empty();
    const out = first.clone();
    for (const [symbol, value] of first.known) {
      if (!rest.every((e) => sameKnown(e.known.get(symbol), value))) out.known.delete(symbol);
    }
    return out;
  }

  /**
   * After a two-armed branch on `condition` (its text, true for the first arm): what both arms
   * agree on, and a variable they set differently as the conditional of their values, which the
   * comparison of step arguments resolves path by path.
   */
  static mergeFork(yes: Env, no: Env, condition: string): Env {
    const out = Env.merge([yes, no]);
    for (const [symbol, a] of yes.known) {
      const b = no.known.get(symbol);
      if (b === undefined || out.known.has(symbol)) continue;
      const text = `(${condition}) ? (${symbolicText(a)}) : (${symbolicText(b)})`;
      if (a.kind !== "function" && b.kind !== "function" && text.length <= MAX_SYMBOLIC) out.known.set(symbol, { kind: "symbolic", text });
    }
    return out;
  }

  /** Takes over what `other` knows (a fork's single surviving arm). */
  assign(other: Env): void {
    this.known.clear();
    for (const [k, v] of other.known) this.known.set(k, v);
  }
}

function sameKnown(a: Known | undefined, b: Known): boolean {
  if (a === undefined) return false;
  if (a.kind === "function" || a.kind === "awaited") return b.kind === a.kind && a.node === b.node;
  if (a.kind === "symbolic") return b.kind === "symbolic" && a.text === b.text;
  return b.kind === "value" && jsonOf(a.value) === jsonOf(b.value);
}

function symbolicText(k: Known): string {
  if (k.kind === "value") return jsonOf(k.value);
  if (k.kind === "symbolic") return k.text;
  if (k.kind === "awaited") return `await ${k.node.getText()}`;
  return "function";
}

/** A symbolic value, or nothing when its text is too long to keep. */
export function symbolic(text: string): Symbolic | undefined {
  return text.length <= MAX_SYMBOLIC ? { kind: "symbolic", text } : undefined;
}

/** The JSON text of a value as a step argument fingerprint reads it (bigint as `12n`, undefined as null). */
export function jsonOf(value: Value): string {
  return (JSON.stringify([value], (_key, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)) ?? "[null]").slice(1, -1);
}

const NOT_KNOWN = Symbol("not known");
type Result = Value | typeof NOT_KNOWN;

/** Computes values of expressions from literals, known locals, `const` declarations and enum members. */
export class Evaluator {
  constructor(private readonly checker: ts.TypeChecker) {}

  /** The value of `e`, or undefined when gen cannot compute it (`known` tells an undefined value apart). */
  value(e: ts.Expression, env: Env): { known: true; value: Value } | { known: false } {
    const r = this.eval(e, env, 0);
    return r === NOT_KNOWN ? { known: false } : { known: true, value: r };
  }

  symbolOf(node: ts.Node): ts.Symbol | undefined {
    let symbol = this.checker.getSymbolAtLocation(node);
    if (symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
    return symbol;
  }

  private eval(e: ts.Expression, env: Env, depth: number): Result {
    if (depth > 12) return NOT_KNOWN;
    const next = (x: ts.Expression) => this.eval(x, env, depth + 1);
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e) || ts.isSatisfiesExpression(e))
      return next(e.expression);
    if (ts.isNumericLiteral(e)) return Number(e.text);
    if (ts.isBigIntLiteral(e)) return BigInt(e.text.slice(0, -1));
    if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
    if (e.kind === ts.SyntaxKind.TrueKeyword) return true;
    if (e.kind === ts.SyntaxKind.FalseKeyword) return false;
    if (e.kind === ts.SyntaxKind.NullKeyword) return null;
    if (ts.isTemplateExpression(e)) {
      let out = e.head.text;
      for (const span of e.templateSpans) {
        const v = next(span.expression);
        if (v === NOT_KNOWN || (typeof v === "object" && v !== null)) return NOT_KNOWN;
        out += String(v) + span.literal.text;
      }
      return out;
    }
    if (ts.isIdentifier(e)) return this.identifier(e, env, depth);
    if (ts.isPropertyAccessExpression(e)) {
      const constant = this.checker.getConstantValue(e);
      if (constant !== undefined) return constant;
      const target = next(e.expression);
      if (target === NOT_KNOWN) return NOT_KNOWN;
      if (e.name.text === "length" && (typeof target === "string" || Array.isArray(target))) return target.length;
      if (isRecord(target) && Object.prototype.hasOwnProperty.call(target, e.name.text)) return target[e.name.text];
      return NOT_KNOWN;
    }
    if (ts.isElementAccessExpression(e)) {
      const target = next(e.expression);
      const index = next(e.argumentExpression);
      if (target === NOT_KNOWN || index === NOT_KNOWN) return NOT_KNOWN;
      if (Array.isArray(target) && typeof index === "number") return (target as readonly Value[])[index];
      if (isRecord(target) && typeof index === "string" && Object.prototype.hasOwnProperty.call(target, index)) return target[index];
      return NOT_KNOWN;
    }
    if (ts.isArrayLiteralExpression(e)) {
      const out: Value[] = [];
      for (const el of e.elements) {
        if (ts.isSpreadElement(el) || ts.isOmittedExpression(el)) return NOT_KNOWN;
        const v = next(el);
        if (v === NOT_KNOWN) return NOT_KNOWN;
        out.push(v);
      }
      return out;
    }
    if (ts.isObjectLiteralExpression(e)) {
      const out: Record<string, Value> = {};
      for (const p of e.properties) {
        let key: string | undefined;
        let v: Result;
        if (ts.isPropertyAssignment(p)) {
          key = ts.isIdentifier(p.name) || ts.isStringLiteral(p.name) || ts.isNumericLiteral(p.name) ? p.name.text : undefined;
          v = next(p.initializer);
        } else if (ts.isShorthandPropertyAssignment(p)) {
          key = p.name.text;
          v = this.identifier(p.name, env, depth + 1);
        } else return NOT_KNOWN;
        if (key === undefined || v === NOT_KNOWN) return NOT_KNOWN;
        out[key] = v;
      }
      return out;
    }
    if (ts.isConditionalExpression(e)) {
      const c = next(e.condition);
      return c === NOT_KNOWN ? NOT_KNOWN : c ? next(e.whenTrue) : next(e.whenFalse);
    }
    if (ts.isPrefixUnaryExpression(e)) {
      const v = next(e.operand);
      if (v === NOT_KNOWN) return NOT_KNOWN;
      switch (e.operator) {
        case ts.SyntaxKind.ExclamationToken:
          return !v;
        case ts.SyntaxKind.MinusToken:
          return typeof v === "number" ? -v : typeof v === "bigint" ? -v : NOT_KNOWN;
        case ts.SyntaxKind.PlusToken:
          return typeof v === "number" ? v : NOT_KNOWN;
        default:
          return NOT_KNOWN;
      }
    }
    if (ts.isBinaryExpression(e)) return this.binary(e, env, depth);
    if (ts.isCallExpression(e) && ts.isIdentifier(e.expression) && e.arguments.length === 1 && this.isGlobal(e.expression)) {
      const arg = e.arguments[0] as ts.Expression;
      const v = next(arg);
      if (v === NOT_KNOWN || (typeof v === "object" && v !== null)) return NOT_KNOWN;
      if (e.expression.text === "String") return String(v);
      if (e.expression.text === "Number" && typeof v !== "bigint") return Number(v);
      if (e.expression.text === "Boolean") return Boolean(v);
    }
    return NOT_KNOWN;
  }

  private binary(e: ts.BinaryExpression, env: Env, depth: number): Result {
    const op = e.operatorToken.kind;
    const left = this.eval(e.left, env, depth + 1);
    if (left === NOT_KNOWN) return NOT_KNOWN;
    if (op === ts.SyntaxKind.AmpersandAmpersandToken) return left ? this.eval(e.right, env, depth + 1) : left;
    if (op === ts.SyntaxKind.BarBarToken) return left ? left : this.eval(e.right, env, depth + 1);
    if (op === ts.SyntaxKind.QuestionQuestionToken) return left ?? this.eval(e.right, env, depth + 1);
    const right = this.eval(e.right, env, depth + 1);
    if (right === NOT_KNOWN) return NOT_KNOWN;
    const objects = (typeof left === "object" && left !== null) || (typeof right === "object" && right !== null);
    if (objects) return NOT_KNOWN;
    const l = left as number | string | boolean | bigint | null | undefined;
    const r = right as number | string | boolean | bigint | null | undefined;
    try {
      switch (op) {
        case ts.SyntaxKind.PlusToken:
          return typeof l === "string" || typeof r === "string" ? String(l) + String(r) : arithmetic(l, r, (a, b) => a + b);
        case ts.SyntaxKind.MinusToken:
          return arithmetic(l, r, (a, b) => a - b);
        case ts.SyntaxKind.AsteriskToken:
          return arithmetic(l, r, (a, b) => a * b);
        case ts.SyntaxKind.SlashToken:
          return arithmetic(l, r, (a, b) => a / b);
        case ts.SyntaxKind.PercentToken:
          return arithmetic(l, r, (a, b) => a % b);
        case ts.SyntaxKind.LessThanToken:
          return (l as number) < (r as number);
        case ts.SyntaxKind.LessThanEqualsToken:
          return (l as number) <= (r as number);
        case ts.SyntaxKind.GreaterThanToken:
          return (l as number) > (r as number);
        case ts.SyntaxKind.GreaterThanEqualsToken:
          return (l as number) >= (r as number);
        case ts.SyntaxKind.EqualsEqualsEqualsToken:
          return l === r;
        case ts.SyntaxKind.ExclamationEqualsEqualsToken:
          return l !== r;
        case ts.SyntaxKind.EqualsEqualsToken:
          return l == r;
        case ts.SyntaxKind.ExclamationEqualsToken:
          return l != r;
        default:
          return NOT_KNOWN;
      }
    } catch {
      return NOT_KNOWN;
    }
  }

  private identifier(e: ts.Identifier, env: Env, depth: number): Result {
    if (e.text === "undefined" && this.isGlobal(e)) return undefined;
    const symbol = this.symbolOf(e);
    const known = env.get(symbol);
    if (known !== undefined) return known.kind === "value" ? known.value : NOT_KNOWN;
    // A constant declared outside any function (a module's, an imported one) holds the same value wherever it is read.
    const declaration = symbol?.valueDeclaration;
    if (
      declaration !== undefined &&
      ts.isVariableDeclaration(declaration) &&
      declaration.initializer !== undefined &&
      (ts.getCombinedNodeFlags(declaration) & ts.NodeFlags.Const) !== 0 &&
      !declaration.getSourceFile().isDeclarationFile &&
      enclosingFunction(declaration) === undefined
    ) {
      return this.eval(declaration.initializer, Env.empty(), depth + 1);
    }
    return NOT_KNOWN;
  }

  private isGlobal(e: ts.Identifier): boolean {
    const declaration = this.symbolOf(e)?.declarations?.[0];
    return declaration === undefined || declaration.getSourceFile().isDeclarationFile;
  }
}

function arithmetic(l: unknown, r: unknown, f: (a: number, b: number) => number): Result {
  if (typeof l === "number" && typeof r === "number") return f(l, r);
  return NOT_KNOWN;
}

function isRecord(v: Value): v is { readonly [key: string]: Value } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The function, method or accessor a node is inside, if any. */
export function enclosingFunction(node: ts.Node): ts.FunctionLikeDeclaration | undefined {
  for (let n = node.parent; n !== undefined; n = n.parent) if (ts.isFunctionLike(n) && "body" in n) return n as ts.FunctionLikeDeclaration;
  return undefined;
}

/** The local variables a piece of code assigns (`x = ...`, `x += ...`, `x++`), which a loop or an unknown branch leaves unknown. */
export function writtenSymbols(node: ts.Node, symbolOf: (n: ts.Node) => ts.Symbol | undefined): Set<ts.Symbol> {
  const out = new Set<ts.Symbol>();
  const target = (t: ts.Expression) => {
    if (ts.isIdentifier(t)) {
      const s = symbolOf(t);
      if (s !== undefined) out.add(s);
    } else if (ts.isArrayLiteralExpression(t)) t.elements.forEach((el) => ts.isExpression(el) && target(el));
    else if (ts.isObjectLiteralExpression(t))
      t.properties.forEach((p) => {
        if (ts.isShorthandPropertyAssignment(p)) target(p.name);
        else if (ts.isPropertyAssignment(p)) target(p.initializer);
      });
    // Calls of a known list's methods may change it (`parts.push(4)`).
    else if (ts.isPropertyAccessExpression(t) || ts.isElementAccessExpression(t)) target(t.expression);
  };
  const visit = (n: ts.Node): void => {
    if (
      ts.isBinaryExpression(n) &&
      n.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
      n.operatorToken.kind <= ts.SyntaxKind.LastAssignment
    )
      target(n.left);
    else if (
      (ts.isPrefixUnaryExpression(n) || ts.isPostfixUnaryExpression(n)) &&
      (n.operator === ts.SyntaxKind.PlusPlusToken || n.operator === ts.SyntaxKind.MinusMinusToken)
    )
      target(n.operand);
    else if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && ts.isIdentifier(n.expression.expression))
      target(n.expression.expression);
    else if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name)) {
      const s = symbolOf(n.name);
      if (s !== undefined) out.add(s);
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return out;
}
