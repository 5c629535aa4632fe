import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ts } from "ts-morph";

/** The package whose decorators and `Ctx` methods the compiler recognises. */
export const RUNTIME_PACKAGE = "@fusee/runtime";

/**
 * Tells whether a symbol is one of the runtime's by following aliases (renamed imports, re-exports
 * through barrels) to its declaration and asking which package declares it. A look-alike with the
 * same name from another module is not the runtime's.
 */
export class RuntimeSymbols {
  private readonly packageOfDir = new Map<string, string | undefined>();

  constructor(private readonly checker: ts.TypeChecker) {}

  /** The runtime export a decorator or callee expression resolves to (`"Workflow"`, `"Step"`, ...), if any. */
  exportAt(expression: ts.Expression): string | undefined {
    const symbol = this.resolve(this.checker.getSymbolAtLocation(expression));
    if (symbol === undefined) return undefined;
    const declaration = symbol.declarations?.[0];
    if (declaration === undefined || !this.isRuntimeFile(declaration.getSourceFile())) return undefined;
    return symbol.name;
  }

  /**
   * For `x.method(...)` callees: `"Ctx.step"`, `"Ctx.patched"`, ... when the method is declared by a
   * runtime class or interface, whatever the receiver expression is called.
   */
  memberAt(expression: ts.Expression): string | undefined {
    const symbol = this.resolve(this.checker.getSymbolAtLocation(expression));
    const declaration = symbol?.declarations?.[0];
    if (symbol === undefined || declaration === undefined) return undefined;
    if (!this.isRuntimeFile(declaration.getSourceFile())) return undefined;
    const owner = declaration.parent;
    if ((ts.isClassLike(owner) || ts.isInterfaceDeclaration(owner)) && owner.name !== undefined) {
      return `${owner.name.text}.${symbol.name}`;
    }
    return undefined;
  }

  /** Whether a declaration file belongs to the runtime package. */
  isRuntimeFile(file: ts.SourceFile): boolean {
    return this.packageNameOf(file.fileName) === RUNTIME_PACKAGE;
  }

  /** The `name` in the nearest package.json above a file. */
  packageNameOf(fileName: string): string | undefined {
    return this.packageOfDirectory(dirname(fileName));
  }

  private packageOfDirectory(dir: string): string | undefined {
    if (this.packageOfDir.has(dir)) return this.packageOfDir.get(dir);
    // A package.json without a name (such as `{ "type": "module" }` in an output folder) is not a package root.
    let name = readPackageName(join(dir, "package.json"));
    if (name === undefined) {
      const parent = dirname(dir);
      name = parent === dir ? undefined : this.packageOfDirectory(parent);
    }
    this.packageOfDir.set(dir, name);
    return name;
  }

  private resolve(symbol: ts.Symbol | undefined): ts.Symbol | undefined {
    if (symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias) return this.checker.getAliasedSymbol(symbol);
    return symbol;
  }
}

function readPackageName(manifest: string): string | undefined {
  if (!existsSync(manifest)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown };
    return typeof parsed.name === "string" ? parsed.name : undefined;
  } catch {
    return undefined;
  }
}
