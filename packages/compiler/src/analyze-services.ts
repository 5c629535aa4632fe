import { ts } from "ts-morph";
import type { AnalysisContext } from "./analysis-context.js";
import type { ServiceIR } from "./ir.js";

/**
 * The classes a workflow's constructor needs, directly or through their own constructors, that have
 * constructor parameters: what `design:paramtypes` would record for each, so builds without decorator
 * metadata can inject them. The runtime's own classes (`Ctx`) are left out, and so is a class that
 * cannot be imported from the generated file; the runtime names such a class when it fails to build it.
 */
export function analyzeServices(context: AnalysisContext, roots: readonly ts.Type[]): ServiceIR[] {
  const { checker, runtime, types } = context;
  const seen = new Set<ts.Symbol>();
  const services: ServiceIR[] = [];
  const visit = (type: ts.Type): void => {
    const value = types.metadataValue(type);
    const symbol = value.kind === "class" ? classSymbol(type) : undefined;
    if (value.kind !== "class" || symbol === undefined || seen.has(symbol)) return;
    seen.add(symbol);
    const declaration = symbol.valueDeclaration ?? symbol.declarations?.[0];
    if (declaration === undefined || runtime.isRuntimeFile(declaration.getSourceFile())) return;
    const [signature] = checker.getTypeOfSymbolAtLocation(symbol, declaration).getConstructSignatures();
    const params = (signature?.getParameters() ?? []).map((p) => checker.getTypeOfSymbolAtLocation(p, declaration));
    if (params.length === 0) return;
    const values = params.map((p) => types.metadataValue(p));
    const importable = [value, ...values].every(
      (v) => v.kind !== "class" || (v.ref.exportName !== undefined && v.ref.module !== undefined),
    );
    if (importable) services.push({ classRef: value.ref, params: values });
    for (const p of params) visit(p);
  };
  for (const root of roots) visit(root);
  return services;
}

/** The class symbol of an instance type, unwrapping `T | undefined` as metadata does. */
function classSymbol(type: ts.Type): ts.Symbol | undefined {
  if (type.flags & ts.TypeFlags.Union) {
    const kept = (type as ts.UnionType).types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)));
    return kept.length === 1 && kept[0] !== undefined ? classSymbol(kept[0]) : undefined;
  }
  const symbol = type.getSymbol();
  return symbol !== undefined && symbol.flags & ts.SymbolFlags.Class ? symbol : undefined;
}
