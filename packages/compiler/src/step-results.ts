import { ts } from "ts-morph";

/**
 * The methods and accessors (its own and inherited) of a step's result class declared in the
 * project: what a plain decoded value would lack.
 */
export function resultMethods(checker: ts.TypeChecker, method: ts.MethodDeclaration): string[] {
  const signature = checker.getSignatureFromDeclaration(method);
  if (signature === undefined) return [];
  const returned = signature.getReturnType();
  const type = checker.getAwaitedType(returned) ?? returned;
  const declaration = type.getSymbol()?.declarations?.find(ts.isClassDeclaration);
  if (declaration === undefined || declaration.getSourceFile().isDeclarationFile) return [];
  return type
    .getProperties()
    .filter((p) =>
      (p.declarations ?? []).some(
        (d) =>
          (ts.isMethodDeclaration(d) || ts.isGetAccessorDeclaration(d) || ts.isSetAccessorDeclaration(d)) &&
          !d.getSourceFile().isDeclarationFile,
      ),
    )
    .map((p) => p.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The fields with an initializer of the class `@Step({ type })` rebuilds results with (its options
 * object given): a rebuilt value has them even when recorded without.
 */
export function defaultedFields(checker: ts.TypeChecker, options: ts.Expression | undefined): string[] {
  const option =
    options !== undefined && ts.isObjectLiteralExpression(options)
      ? options.properties.find(
          (p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === "type",
        )?.initializer
      : undefined;
  if (option === undefined) return [];
  const instance = checker.getTypeAtLocation(option).getConstructSignatures()[0]?.getReturnType();
  if (instance === undefined) return [];
  return instance
    .getProperties()
    .filter((p) => (p.declarations ?? []).some((d) => ts.isPropertyDeclaration(d) && d.initializer !== undefined))
    .map((p) => p.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
