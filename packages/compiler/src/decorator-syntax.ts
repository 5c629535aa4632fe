import { ts } from "ts-morph";

/** The expression naming a decorator: `Workflow` in `@Workflow()`, `fusee.Workflow` in `@fusee.Workflow`. */
export function decoratorCallee(decorator: ts.Decorator): ts.Expression {
  const e = decorator.expression;
  return ts.isCallExpression(e) ? e.expression : e;
}

export function decoratorArgument(decorator: ts.Decorator): ts.Expression | undefined {
  const e = decorator.expression;
  return ts.isCallExpression(e) ? e.arguments[0] : undefined;
}

export function property(object: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
  for (const p of object.properties) {
    if (ts.isPropertyAssignment(p) && memberName(p.name) === name) return p.initializer;
    if (ts.isShorthandPropertyAssignment(p) && p.name.text === name) return p.name;
  }
  return undefined;
}

/** An object literal that initializes a `const` declaration, whose properties nobody reassigns in place by convention. */
function isConstObject(node: ts.Node): boolean {
  const parent = node.parent;
  return (
    ts.isObjectLiteralExpression(node) &&
    parent !== undefined &&
    ts.isVariableDeclaration(parent) &&
    (ts.getCombinedNodeFlags(parent) & ts.NodeFlags.Const) !== 0
  );
}

export function memberName(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

/**
 * The string a name expression always holds: a literal, an expression of a string literal type,
 * or a constant (`const NAME = "..."`, a property of a `const` object literal) declared in any
 * module of the project, whose value the type alone (`string`) does not tell.
 */
export function constantString(checker: ts.TypeChecker, expression: ts.Expression, depth = 0): string | undefined {
  if (ts.isStringLiteral(expression) || ts.isNoSubstitutionTemplateLiteral(expression)) return expression.text;
  const type = checker.getTypeAtLocation(expression);
  if (type.isStringLiteral()) return type.value;
  if (depth > 8 || !(ts.isIdentifier(expression) || ts.isPropertyAccessExpression(expression))) return undefined;
  let symbol = checker.getSymbolAtLocation(ts.isPropertyAccessExpression(expression) ? expression.name : expression);
  if (symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const declaration = symbol?.valueDeclaration;
  if (declaration === undefined || declaration.getSourceFile().isDeclarationFile) return undefined;
  if (
    ts.isVariableDeclaration(declaration) &&
    declaration.initializer !== undefined &&
    ts.getCombinedNodeFlags(declaration) & ts.NodeFlags.Const
  ) {
    return constantString(checker, declaration.initializer, depth + 1);
  }
  if (ts.isPropertyAssignment(declaration) && isConstObject(declaration.parent))
    return constantString(checker, declaration.initializer, depth + 1);
  return undefined;
}
