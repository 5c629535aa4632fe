import { ts } from "ts-morph";

/**
 * The values of every enum the workflow names, in its code (`Tier.Gold`) or in a signature type, by
 * enum and member: what a recorded value means.
 */
export function collectEnums(
  checker: ts.TypeChecker,
  classes: readonly ts.ClassLikeDeclaration[],
  types: readonly ts.Type[],
): Record<string, Record<string, number | string>> {
  const enums = new Set<ts.EnumDeclaration>();
  const addSymbol = (symbol: ts.Symbol | undefined): void => {
    for (const d of symbol?.declarations ?? []) {
      if (ts.isEnumDeclaration(d) && !d.getSourceFile().isDeclarationFile) enums.add(d);
      if (ts.isEnumMember(d) && !d.getSourceFile().isDeclarationFile) enums.add(d.parent);
    }
  };
  const addType = (type: ts.Type, depth: number): void => {
    if (depth > 3) return;
    addSymbol(type.getSymbol());
    if (type.isUnionOrIntersection()) type.types.forEach((t) => addType(t, depth + 1));
    if (checker.isArrayType(type) || checker.isTupleType(type))
      checker.getTypeArguments(type as ts.TypeReference).forEach((t) => addType(t, depth + 1));
  };
  types.forEach((t) => addType(t, 0));
  const visit = (n: ts.Node): void => {
    if (ts.isPropertyAccessExpression(n) || ts.isTypeReferenceNode(n))
      addSymbol(checker.getSymbolAtLocation(ts.isPropertyAccessExpression(n) ? n : n.typeName));
    ts.forEachChild(n, visit);
  };
  classes.forEach(visit);
  const out: Record<string, Record<string, number | string>> = {};
  for (const e of [...enums].sort((a, b) => (a.name.text < b.name.text ? -1 : a.name.text > b.name.text ? 1 : 0))) {
    const members: Record<string, number | string> = {};
    for (const m of e.members) {
      const value = checker.getConstantValue(m);
      if (value !== undefined) members[m.name.getText()] = value;
    }
    out[e.name.text] = members;
  }
  return out;
}
