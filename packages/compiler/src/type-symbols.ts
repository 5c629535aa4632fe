import { ts } from "ts-morph";

/** Whether a symbol is global: declared in a default library, a script file or `declare global`. */
export function isGlobalSymbol(program: ts.Program, symbol: ts.Symbol): boolean {
  const declaration = symbol.declarations?.[0];
  if (declaration === undefined) return false;
  const file = declaration.getSourceFile();
  if (program.isSourceFileDefaultLibrary(file) || !ts.isExternalModule(file)) return true;
  for (let node: ts.Node | undefined = declaration.parent; node !== undefined; node = node.parent) {
    if (ts.isModuleDeclaration(node) && node.flags & ts.NodeFlags.GlobalAugmentation) return true;
  }
  return false;
}

/** The namespaces around a declaration, outermost first; `local` when a function or class encloses it. */
export function containers(declaration: ts.Declaration): { namespaces: ts.ModuleDeclaration[]; local: boolean } {
  const namespaces: ts.ModuleDeclaration[] = [];
  for (let node = declaration.parent; !ts.isSourceFile(node); node = node.parent) {
    if (ts.isModuleBlock(node)) continue;
    if (!ts.isModuleDeclaration(node)) return { namespaces, local: true };
    // `declare global { }` and `declare module "x" { }` are scopes of their own, not namespaces to qualify by.
    if (node.flags & ts.NodeFlags.GlobalAugmentation || ts.isStringLiteral(node.name)) break;
    namespaces.unshift(node);
  }
  return { namespaces, local: false };
}

export function isExported(declaration: ts.Declaration): boolean {
  return (ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Export) !== 0;
}

export function isReadonly(symbol: ts.Symbol): boolean {
  const declaration = symbol.valueDeclaration;
  return declaration !== undefined && (ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Readonly) !== 0;
}

/** Members that carry data through serialization: properties, not methods, accessors or private state. */
export function isDataProperty(symbol: ts.Symbol): boolean {
  if (!(symbol.flags & ts.SymbolFlags.Property)) return false;
  if (symbol.name.startsWith("__@") || symbol.name.startsWith("#")) return false;
  const declaration = symbol.valueDeclaration;
  if (declaration === undefined) return true;
  const modifiers = ts.getCombinedModifierFlags(declaration);
  return (modifiers & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) === 0;
}
