import { ts } from "ts-morph";

/**
 * The class and its base classes declared in source, nearest first, through mixins: for `extends
 * Audited(Base)`, the class `Audited` returns, then `Base` (the argument its `extends` names).
 */
export function classChain(checker: ts.TypeChecker, declaration: ts.ClassDeclaration): ts.ClassLikeDeclaration[] {
  const chain: ts.ClassLikeDeclaration[] = [];
  const resolve = (e: ts.Node): ts.Symbol | undefined => {
    let symbol = checker.getSymbolAtLocation(e);
    if (symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    return symbol;
  };
  const inSource = (d: ts.Node) => !d.getSourceFile().isDeclarationFile;
  const bases = (
    e: ts.Expression,
    args: ReadonlyMap<ts.Symbol, ts.Expression>,
    depth: number,
  ): [ts.ClassLikeDeclaration, ReadonlyMap<ts.Symbol, ts.Expression>][] => {
    if (depth > 8) return [];
    if (ts.isParenthesizedExpression(e)) return bases(e.expression, args, depth + 1);
    if (ts.isCallExpression(e)) {
      const fn = resolve(e.expression)?.valueDeclaration;
      const body = fn === undefined ? undefined : bodyOf(fn);
      const params = fn === undefined ? undefined : functionOf(fn)?.parameters;
      if (body === undefined || params === undefined) return [];
      const bound = new Map(args);
      params.forEach((p, i) => {
        const arg = e.arguments[i];
        const symbol = resolve(p.name);
        if (arg !== undefined && symbol !== undefined) bound.set(symbol, arg);
      });
      return returnedClasses(body, resolve).map((cls) => [cls, bound]);
    }
    const symbol = resolve(e);
    const argument = symbol === undefined ? undefined : args.get(symbol);
    if (argument !== undefined) return bases(argument, new Map(), depth + 1);
    const cls = symbol?.declarations?.find(ts.isClassLike);
    return cls === undefined || !inSource(cls) ? [] : [[cls, new Map()]];
  };
  const add = (cls: ts.ClassLikeDeclaration, args: ReadonlyMap<ts.Symbol, ts.Expression>): void => {
    if (chain.includes(cls)) return;
    chain.push(cls);
    const heritage = cls.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
    if (heritage !== undefined) for (const [base, bound] of bases(heritage.expression, args, 0)) add(base, bound);
  };
  add(declaration, new Map());
  return chain;
}

/** The classes a mixin function returns: class expressions, or classes it declares and returns by name. */
function returnedClasses(body: ts.Node, resolve: (e: ts.Node) => ts.Symbol | undefined): ts.ClassLikeDeclaration[] {
  const out: ts.ClassLikeDeclaration[] = [];
  const take = (e: ts.Expression | undefined): void => {
    if (e === undefined) return;
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) return take(e.expression);
    if (ts.isClassExpression(e)) out.push(e);
    else if (ts.isIdentifier(e)) {
      const cls = resolve(e)?.declarations?.find(ts.isClassLike);
      if (cls !== undefined) out.push(cls);
    }
  };
  if (!ts.isBlock(body)) take(body as ts.Expression);
  const visit = (n: ts.Node): void => {
    if (ts.isReturnStatement(n)) take(n.expression);
    if (!ts.isFunctionLike(n)) ts.forEachChild(n, visit);
  };
  if (ts.isBlock(body)) ts.forEachChild(body, visit);
  return out;
}

function functionOf(declaration: ts.Node): ts.SignatureDeclaration | undefined {
  if (ts.isFunctionDeclaration(declaration) || ts.isMethodDeclaration(declaration) || ts.isGetAccessorDeclaration(declaration))
    return declaration;
  if ((ts.isVariableDeclaration(declaration) || ts.isPropertyDeclaration(declaration)) && declaration.initializer !== undefined) {
    const init = declaration.initializer;
    if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return init;
  }
  return undefined;
}

/** The body of a function, method, getter or function-valued field. */
export function bodyOf(declaration: ts.Node): ts.Node | undefined {
  const fn = functionOf(declaration);
  return fn !== undefined && "body" in fn ? (fn.body as ts.Node | undefined) : undefined;
}

export function hasBody(member: ts.ClassElement): boolean {
  return bodyOf(member) !== undefined;
}

/** The fields of `this` a handler assigns or changes in place, also through the class's methods it calls. */
export function assignedFields(handler: ts.MethodDeclaration, member: (name: string) => ts.Declaration | undefined): ReadonlySet<string> {
  const out = new Set<string>();
  const seen = new Set<ts.Node>();
  const field = (e: ts.Expression): string | undefined => {
    if (ts.isPropertyAccessExpression(e) && e.expression.kind === ts.SyntaxKind.ThisKeyword) return e.name.text;
    if (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)) return field(e.expression);
    return undefined;
  };
  const visit = (n: ts.Node): void => {
    if (
      ts.isBinaryExpression(n) &&
      n.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
      n.operatorToken.kind <= ts.SyntaxKind.LastAssignment
    ) {
      const f = field(n.left);
      if (f !== undefined) out.add(f);
    } else if ((ts.isPrefixUnaryExpression(n) || ts.isPostfixUnaryExpression(n)) && ts.isExpression(n.operand)) {
      const f = field(n.operand);
      if (f !== undefined) out.add(f);
    } else if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
      const target = n.expression.expression;
      const f = field(target);
      if (f !== undefined) out.add(f);
      if (target.kind === ts.SyntaxKind.ThisKeyword) {
        const body = bodyOf(member(n.expression.name.text) ?? n);
        if (body !== undefined && !seen.has(body)) {
          seen.add(body);
          visit(body);
        }
      }
    }
    ts.forEachChild(n, visit);
  };
  if (handler.body !== undefined) visit(handler.body);
  return out;
}
