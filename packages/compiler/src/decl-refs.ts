import { join } from "node:path";
import { ts } from "ts-morph";
import type { DeclRef } from "./ir.js";
import type { RuntimeSymbols } from "./runtime-symbols.js";
import { locate } from "./source-location.js";
import { containers, isExported } from "./type-symbols.js";

/**
 * Finds where a named declaration can be imported from: a project file, a namespace inside one, or
 * the entry point of the package that declares it.
 */
export class DeclRefs {
  private readonly declRefs = new Map<ts.Symbol, DeclRef>();
  private readonly exportsOfModule = new Map<ts.Symbol, Map<ts.Symbol, string>>();
  private readonly packageEntries = new Map<string, ts.Symbol | undefined>();

  constructor(
    private readonly program: ts.Program,
    private readonly checker: ts.TypeChecker,
    private readonly projectDir: string,
    private readonly runtime: RuntimeSymbols,
    private readonly isExternal: (file: ts.SourceFile) => boolean,
  ) {}

  /** The declaration reference for a named symbol (class, interface, alias, enum) outside the default library. */
  declRef(symbol: ts.Symbol): DeclRef {
    const cached = this.declRefs.get(symbol);
    if (cached !== undefined) return cached;
    const declaration = symbol.declarations?.[0];
    const isClass = (symbol.flags & ts.SymbolFlags.Class) !== 0;
    let ref: DeclRef;
    if (declaration === undefined) {
      ref = { name: symbol.name, at: { file: "<unknown>", line: 0 }, isClass, unreachable: "it has no declaration" };
    } else {
      const file = declaration.getSourceFile();
      const at = locate(this.projectDir, declaration);
      // A default export's symbol is called "default"; the declaration keeps the name it was written with.
      const declared = ts.getNameOfDeclaration(declaration);
      const name = symbol.name === "default" && declared !== undefined && ts.isIdentifier(declared) ? declared.text : symbol.name;
      const base = { name, at, isClass };
      if (this.isExternal(file)) {
        const pkg = this.runtime.packageNameOf(file.fileName);
        const entry = pkg === undefined ? undefined : this.packageEntry(pkg);
        const exportName = entry === undefined ? undefined : this.exportName(entry, symbol);
        ref =
          pkg !== undefined && exportName !== undefined
            ? { ...base, exportName, module: { kind: "package", specifier: pkg } }
            : { ...base, unreachable: `it is not exported from the entry point of package ${pkg ?? "(unknown)"}` };
      } else {
        const moduleSymbol = this.checker.getSymbolAtLocation(file);
        const { namespaces, local } = containers(declaration);
        const [outer] = namespaces;
        if (local) {
          ref = { ...base, unreachable: "it is declared inside a function or class" };
        } else if (outer === undefined) {
          const exportName = moduleSymbol === undefined ? undefined : this.exportName(moduleSymbol, symbol);
          ref =
            exportName !== undefined
              ? { ...base, exportName, module: { kind: "file", path: file.fileName } }
              : { ...base, unreachable: "it is not exported" };
        } else {
          const outerSymbol = this.checker.getSymbolAtLocation(outer.name);
          const exportName =
            moduleSymbol === undefined || outerSymbol === undefined ? undefined : this.exportName(moduleSymbol, outerSymbol);
          const inner = [...namespaces.slice(1), declaration];
          ref =
            exportName !== undefined && inner.every(isExported)
              ? {
                  ...base,
                  exportName,
                  module: { kind: "file", path: file.fileName },
                  binding: outer.name.getText(),
                  path: [...namespaces.slice(1).map((n) => n.name.getText()), name],
                }
              : { ...base, unreachable: `it is not exported from namespace ${namespaces.map((n) => n.name.getText()).join(".")}` };
        }
      }
    }
    this.declRefs.set(symbol, ref);
    return ref;
  }

  private exportName(moduleSymbol: ts.Symbol, symbol: ts.Symbol): string | undefined {
    let names = this.exportsOfModule.get(moduleSymbol);
    if (names === undefined) {
      names = new Map();
      for (const exported of this.checker.getExportsOfModule(moduleSymbol)) {
        const target = exported.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(exported) : exported;
        const previous = names.get(target);
        if (previous === undefined || previous === "default") names.set(target, exported.name);
      }
      this.exportsOfModule.set(moduleSymbol, names);
    }
    return names.get(symbol);
  }

  private packageEntry(pkg: string): ts.Symbol | undefined {
    if (this.packageEntries.has(pkg)) return this.packageEntries.get(pkg);
    const options = this.program.getCompilerOptions();
    const resolved = ts.resolveModuleName(pkg, join(this.projectDir, "fusee.generated.ts"), options, ts.sys).resolvedModule;
    const file = resolved === undefined ? undefined : this.program.getSourceFile(resolved.resolvedFileName);
    const symbol = file === undefined ? undefined : this.checker.getSymbolAtLocation(file);
    this.packageEntries.set(pkg, symbol);
    return symbol;
  }
}
