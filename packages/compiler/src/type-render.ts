import { join } from "node:path";
import { ts } from "ts-morph";
import type { DeclRef, ObjectMember, TypeExpr, TypeRef, ValueRef } from "./ir.js";
import { declaredName, printType } from "./print-type.js";
import type { RuntimeSymbols } from "./runtime-symbols.js";
import { locate } from "./source-location.js";

/** Anonymous types nest at most this deep before they are spelled `unknown`. */
const MAX_DEPTH = 8;
/** Named types are expanded this deep in compatibility shapes. */
const MAX_SHAPE_DEPTH = 6;

type Named = { readonly kind: "global"; readonly name: string } | { readonly kind: "ref"; readonly ref: DeclRef };

/**
 * Reads checker types into {@link TypeRef}s: the spelling the generated code uses (named declarations
 * kept as references to import), a structural shape for compatibility checks, and the class values
 * are rebuilt with.
 */
export class TypeRenderer {
  private readonly declRefs = new Map<ts.Symbol, DeclRef>();
  private readonly exportsOfModule = new Map<ts.Symbol, Map<ts.Symbol, string>>();
  private readonly packageEntries = new Map<string, ts.Symbol | undefined>();
  private readonly shapes = new Map<ts.Type, string>();
  private readonly structures = new Map<ts.Type, string>();

  constructor(
    private readonly program: ts.Program,
    private readonly checker: ts.TypeChecker,
    private readonly projectDir: string,
    private readonly runtime: RuntimeSymbols,
    /** Whether a file belongs to a dependency, which is imported by its package name. */
    private readonly isExternal: (file: ts.SourceFile) => boolean = (file) => program.isSourceFileFromExternalLibrary(file),
  ) {}

  /**
   * Reads a type. With `optional`, a `| undefined` member is dropped, as for a parameter or
   * property written `name?: T`.
   */
  render(type: ts.Type, optional = false): TypeRef {
    const refs: DeclRef[] = [];
    const members = type.flags & ts.TypeFlags.Union ? this.unionParts(type as ts.UnionType) : [];
    const parts =
      optional && members.some((t) => t.flags & ts.TypeFlags.Undefined)
        ? members.filter((t) => !(t.flags & ts.TypeFlags.Undefined))
        : [type];
    const [only] = parts;
    let expr: TypeExpr;
    let shape: string;
    let structure: string;
    if (only !== undefined && parts.length === 1) {
      expr = this.expr(only, 0, refs);
      shape = this.shape(only);
      structure = this.shape(only, [], 0, false);
    } else {
      const kept = collapseBooleans(parts);
      expr = {
        kind: "union",
        types: sortUnion(kept.map((t) => (t === "boolean" ? text("boolean") : this.expr(t, 1, refs)))),
      };
      shape = sortShapes([...new Set(kept.map((t) => (t === "boolean" ? "boolean" : this.shape(t))))]).join(" | ");
      const all = (type as ts.UnionType).types;
      const flat = collapseBooleans(optional ? all.filter((t) => !(t.flags & ts.TypeFlags.Undefined)) : all);
      structure = sortShapes([...new Set(flat.map((t) => (t === "boolean" ? "boolean" : this.shape(t, [], 0, false))))]).join(" | ");
    }
    const runtimeClass = this.runtimeClass(type);
    return {
      expr,
      display: printType(expr, declaredName),
      shape,
      ...(structure === shape ? {} : { structure }),
      ...(runtimeClass === undefined ? {} : { runtimeClass }),
      refs: [...new Set(refs)],
    };
  }

  /** What `emitDecoratorMetadata` would record for a parameter of this type (`design:paramtypes`). */
  metadataValue(type: ts.Type): ValueRef {
    const f = type.flags;
    if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return { kind: "global", name: "Object" };
    if (f & (ts.TypeFlags.Void | ts.TypeFlags.Undefined | ts.TypeFlags.Never | ts.TypeFlags.Null)) return { kind: "undefined" };
    if (f & ts.TypeFlags.Union) {
      const parts = (type as ts.UnionType).types
        .filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null | ts.TypeFlags.Never)))
        .map((t) => this.metadataValue(t));
      const keys = new Set(parts.map(valueKey));
      return parts.length > 0 && keys.size === 1 && parts[0] !== undefined ? parts[0] : { kind: "global", name: "Object" };
    }
    if (f & ts.TypeFlags.StringLike) return { kind: "global", name: "String" };
    if (f & ts.TypeFlags.NumberLike) return { kind: "global", name: "Number" };
    if (f & ts.TypeFlags.BooleanLike) return { kind: "global", name: "Boolean" };
    if (f & ts.TypeFlags.BigIntLike) return { kind: "global", name: "BigInt" };
    if (f & ts.TypeFlags.ESSymbolLike) return { kind: "global", name: "Symbol" };
    if (this.checker.isArrayType(type) || this.checker.isTupleType(type)) return { kind: "global", name: "Array" };
    if (f & ts.TypeFlags.Object) {
      const global = type.getSymbol();
      if (global !== undefined && global.flags & ts.SymbolFlags.Value && isGlobalSymbol(this.program, global)) {
        return { kind: "global", name: global.name };
      }
      const symbol = this.classSymbolOf(type);
      if (symbol !== undefined) {
        const named = this.named(symbol);
        return named.kind === "global" ? { kind: "global", name: named.name } : { kind: "class", ref: named.ref };
      }
      if (this.checker.getSignaturesOfType(type, ts.SignatureKind.Call).length > 0 && this.checker.getPropertiesOfType(type).length === 0) {
        return { kind: "global", name: "Function" };
      }
    }
    return { kind: "global", name: "Object" };
  }

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

  private expr(type: ts.Type, depth: number, refs: DeclRef[]): TypeExpr {
    if (depth > MAX_DEPTH) return text("unknown");
    const f = type.flags;
    if (type.aliasSymbol !== undefined && !(f & ts.TypeFlags.Boolean)) {
      const args = (type.aliasTypeArguments ?? []).map((a) => this.expr(a, depth + 1, refs));
      return this.namedExpr(this.named(type.aliasSymbol), args, refs);
    }
    const keyword = keywordOf(type);
    if (keyword !== undefined) return text(keyword);
    if (f & ts.TypeFlags.EnumLiteral && !(f & ts.TypeFlags.Union)) {
      const member = type.getSymbol();
      const declaration = member?.valueDeclaration;
      const owner =
        declaration !== undefined && ts.isEnumMember(declaration) ? this.checker.getSymbolAtLocation(declaration.parent.name) : undefined;
      if (member !== undefined && owner !== undefined && owner.flags & ts.SymbolFlags.Enum) {
        const ref = this.declRef(owner);
        refs.push(ref);
        return { kind: "enumMember", ref, member: member.name };
      }
    }
    if (f & ts.TypeFlags.Union && f & ts.TypeFlags.EnumLiteral) {
      const symbol = type.getSymbol();
      if (symbol !== undefined) return this.namedExpr(this.named(symbol), [], refs);
    }
    const literal = literalOf(type);
    if (literal !== undefined) return text(literal);
    if (f & ts.TypeFlags.Union) {
      const parts = collapseBooleans(this.unionParts(type as ts.UnionType)).map((t) =>
        t === "boolean" ? text("boolean") : this.expr(t, depth + 1, refs),
      );
      return { kind: "union", types: sortUnion(parts) };
    }
    if (f & ts.TypeFlags.Intersection) {
      const parts = (type as ts.IntersectionType).types.map((t) => this.expr(t, depth + 1, refs));
      return { kind: "intersection", types: sortBy(parts, (p) => printType(p, declaredName)) };
    }
    if (f & ts.TypeFlags.TypeParameter) return text("unknown");
    if (f & ts.TypeFlags.Object) return this.objectExpr(type as ts.ObjectType, depth, refs);
    return text(this.checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation));
  }

  private objectExpr(type: ts.ObjectType, depth: number, refs: DeclRef[]): TypeExpr {
    const checker = this.checker;
    if (checker.isArrayType(type)) {
      const element = checker.getTypeArguments(type as ts.TypeReference)[0];
      return {
        kind: "array",
        element: element === undefined ? text("unknown") : this.expr(element, depth + 1, refs),
        readonly: type.getSymbol()?.name === "ReadonlyArray",
      };
    }
    if (checker.isTupleType(type)) {
      const reference = type as ts.TypeReference;
      const target = reference.target as ts.TupleType;
      const args = checker.getTypeArguments(reference);
      const elements = args.map((arg, i) => {
        const flags = target.elementFlags[i] ?? ts.ElementFlags.Required;
        const label = target.labeledElementDeclarations?.[i];
        const rest = (flags & ts.ElementFlags.Variable) !== 0;
        const optional = (flags & ts.ElementFlags.Optional) !== 0;
        const read = this.expr(arg, depth + 1, refs);
        const inner = optional ? dropUndefined(read) : read;
        return {
          type: rest ? ({ kind: "array", element: inner, readonly: false } as const) : inner,
          optional,
          rest,
          ...(label !== undefined && ts.isIdentifier(label.name) ? { name: label.name.text } : {}),
        };
      });
      return { kind: "tuple", elements, readonly: target.readonly };
    }
    if (type.objectFlags & ts.ObjectFlags.Reference) {
      const reference = type as ts.TypeReference;
      const symbol = reference.target.getSymbol();
      if (symbol !== undefined) {
        const count = reference.target.typeParameters?.length ?? 0;
        const args = checker
          .getTypeArguments(reference)
          .slice(0, count)
          .map((a) => this.expr(a, depth + 1, refs));
        return this.namedExpr(this.named(symbol), args, refs);
      }
    }
    const symbol = type.getSymbol();
    if (symbol !== undefined && !(type.objectFlags & ts.ObjectFlags.Anonymous)) {
      if (symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface | ts.SymbolFlags.Enum)) {
        return this.namedExpr(this.named(symbol), [], refs);
      }
    }
    if (symbol !== undefined && type.objectFlags & ts.ObjectFlags.Anonymous && symbol.flags & ts.SymbolFlags.Class) {
      const named = this.named(symbol);
      if (named.kind === "global") return text(`typeof ${named.name}`);
      refs.push(named.ref);
      return { kind: "typeof", ref: named.ref };
    }
    const properties = checker.getPropertiesOfType(type);
    const calls = checker.getSignaturesOfType(type, ts.SignatureKind.Call);
    const [call] = calls;
    if (call !== undefined && calls.length === 1 && properties.length === 0) {
      return {
        kind: "function",
        params: call.getParameters().map((p) => {
          const declaration = p.valueDeclaration;
          const param = declaration !== undefined && ts.isParameter(declaration) ? declaration : undefined;
          return {
            name: p.name,
            type: this.expr(checker.getTypeOfSymbol(p), depth + 1, refs),
            optional: param !== undefined && (param.questionToken !== undefined || param.initializer !== undefined),
            rest: param?.dotDotDotToken !== undefined,
          };
        }),
        result: this.expr(call.getReturnType(), depth + 1, refs),
      };
    }
    const members: ObjectMember[] = [];
    for (const info of checker.getIndexInfosOfType(type)) {
      members.push({
        kind: "index",
        keyType: this.expr(info.keyType, depth + 1, refs),
        type: this.expr(info.type, depth + 1, refs),
        readonly: info.isReadonly,
      });
    }
    for (const property of properties) {
      if (property.name.startsWith("__@") || property.name.startsWith("#")) continue;
      const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
      const propertyType = checker.getTypeOfSymbol(property);
      const read = this.expr(propertyType, depth + 1, refs);
      members.push({
        kind: "property",
        name: propertyName(property.name),
        type: optional ? dropUndefined(read) : read,
        optional,
        readonly: isReadonly(property),
      });
    }
    return { kind: "object", members };
  }

  private namedExpr(named: Named, args: readonly TypeExpr[], refs: DeclRef[]): TypeExpr {
    if (named.kind === "global") return { kind: "global", name: named.name, args };
    refs.push(named.ref);
    return { kind: "ref", ref: named.ref, args };
  }

  private named(symbol: ts.Symbol): Named {
    if (!isGlobalSymbol(this.program, symbol)) return { kind: "ref", ref: this.declRef(symbol) };
    const declaration = symbol.declarations?.[0];
    const namespaces = declaration === undefined ? [] : containers(declaration).namespaces;
    return { kind: "global", name: [...namespaces.map((n) => n.name.getText()), symbol.name].join(".") };
  }

  /**
   * The members of a union, flattened as the checker holds them, except that a named union a
   * dependency declares (`Duration | null`) stays one member, as written.
   */
  private unionParts(type: ts.UnionType): readonly ts.Type[] {
    // `origin` (not in the public typings) keeps the union as written, before its members were flattened.
    const origin = (type as { origin?: ts.Type }).origin;
    if (origin === undefined || !(origin.flags & ts.TypeFlags.Union)) return type.types;
    const kept = (origin as ts.UnionType).types.filter(
      (t) => t.flags & ts.TypeFlags.Union && this.dependencyTypeName(t, [], 0) !== undefined,
    );
    if (kept.length === 0) return type.types;
    const covered = new Set(kept.flatMap((t) => (t as ts.UnionType).types));
    return [...kept, ...type.types.filter((t) => !covered.has(t))];
  }

  /**
   * A type alias, interface, class or enum a dependency declares, spelled by its name (with the
   * shapes of its type arguments): it changes only with the dependency, and the expansion of one
   * such as `Duration` (a union of template literals) ran to 30 KB in every lock that used it.
   */
  private dependencyTypeName(type: ts.Type, stack: readonly ts.Type[], depth: number): string | undefined {
    const reference = (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference ? (type as ts.TypeReference) : undefined;
    const symbol = type.aliasSymbol ?? reference?.target.getSymbol() ?? type.getSymbol();
    const named = ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Interface | ts.SymbolFlags.Class | ts.SymbolFlags.Enum;
    if (symbol === undefined || !(symbol.flags & named) || isGlobalSymbol(this.program, symbol)) return undefined;
    const declaration = symbol.declarations?.[0];
    if (declaration === undefined || !this.isExternal(declaration.getSourceFile())) return undefined;
    const count = reference?.target.typeParameters?.length ?? 0;
    const args =
      type.aliasSymbol !== undefined
        ? (type.aliasTypeArguments ?? [])
        : reference !== undefined
          ? this.checker.getTypeArguments(reference).slice(0, count)
          : [];
    const next = [...stack, type];
    const name = this.declRef(symbol).name;
    return args.length === 0 ? name : `${name}<${args.map((a) => this.shape(a, next, depth + 1)).join(", ")}>`;
  }

  /** A structural spelling with named types expanded to their data members, for compatibility checks. */
  /** The shape of a type; with `named` false, dependencies' types are expanded too (the structure). */
  private shape(type: ts.Type, stack: readonly ts.Type[] = [], depth = 0, named = true): string {
    const cache = named ? this.shapes : this.structures;
    const cached = cache.get(type);
    if (cached !== undefined) return cached;
    const result = this.computeShape(type, stack, depth, named);
    if (stack.length === 0) cache.set(type, result);
    return result;
  }

  private computeShape(type: ts.Type, stack: readonly ts.Type[], depth: number, named: boolean): string {
    if (depth > MAX_SHAPE_DEPTH || stack.includes(type)) return "unknown";
    const byName = named ? this.dependencyTypeName(type, stack, depth) : undefined;
    if (byName !== undefined) return byName;
    const f = type.flags;
    const checker = this.checker;
    const keyword = keywordOf(type);
    if (keyword !== undefined) return keyword;
    const literal = literalOf(type);
    if (literal !== undefined) return literal;
    if (f & ts.TypeFlags.EnumLiteral && !(f & ts.TypeFlags.Union)) {
      const value = (type as ts.LiteralType).value;
      return typeof value === "string" ? JSON.stringify(value) : String(value);
    }
    const next = [...stack, type];
    if (f & ts.TypeFlags.Union) {
      const members = named ? this.unionParts(type as ts.UnionType) : (type as ts.UnionType).types;
      const parts = collapseBooleans(members).map((t) => (t === "boolean" ? "boolean" : this.shape(t, next, depth + 1, named)));
      return sortShapes([...new Set(parts)]).join(" | ");
    }
    if (f & ts.TypeFlags.Intersection) {
      return (type as ts.IntersectionType).types
        .map((t) => parenthesize(this.shape(t, next, depth + 1, named)))
        .sort()
        .join(" & ");
    }
    if (!(f & ts.TypeFlags.Object)) return f & ts.TypeFlags.TypeParameter ? "unknown" : checker.typeToString(type);
    if (checker.isArrayType(type)) {
      const element = checker.getTypeArguments(type as ts.TypeReference)[0];
      return `${parenthesize(element === undefined ? "unknown" : this.shape(element, next, depth + 1, named))}[]`;
    }
    if (checker.isTupleType(type)) {
      const reference = type as ts.TypeReference;
      const target = reference.target as ts.TupleType;
      const elements = checker.getTypeArguments(reference).map((arg, i) => {
        const flags = target.elementFlags[i] ?? ts.ElementFlags.Required;
        const inner = this.shape(arg, next, depth + 1, named);
        if (flags & ts.ElementFlags.Variable) return `...${parenthesize(inner)}[]`;
        return flags & ts.ElementFlags.Optional ? `${parenthesize(inner.replace(/ \| undefined$/, ""))}?` : inner;
      });
      return `[${elements.join(", ")}]`;
    }
    const symbol =
      (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference ? (type as ts.TypeReference).target.getSymbol() : type.getSymbol();
    if (symbol !== undefined && isGlobalSymbol(this.program, symbol) && symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface)) {
      const count = (type as ts.TypeReference).target?.typeParameters?.length ?? 0;
      const args =
        (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference
          ? checker
              .getTypeArguments(type as ts.TypeReference)
              .slice(0, count)
              .map((a) => this.shape(a, next, depth + 1, named))
          : [];
      return args.length === 0 ? symbol.name : `${symbol.name}<${args.join(", ")}>`;
    }
    const properties = checker.getPropertiesOfType(type).filter(isDataProperty);
    if (properties.length === 0 && checker.getSignaturesOfType(type, ts.SignatureKind.Call).length > 0) return "unknown";
    const members: string[] = [];
    for (const info of checker.getIndexInfosOfType(type)) {
      members.push(`[key: ${this.shape(info.keyType, next, depth + 1, named)}]: ${this.shape(info.type, next, depth + 1, named)}`);
    }
    for (const property of [...properties].sort((a, b) => compare(a.name, b.name))) {
      const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
      const propertyType = checker.getTypeOfSymbol(property);
      const read = this.shape(propertyType, next, depth + 1, named);
      const inner = optional ? read.replace(/ \| undefined$/, "") : read;
      members.push(`${propertyName(property.name)}${optional ? "?" : ""}: ${inner}`);
    }
    return members.length === 0 ? "{}" : `{ ${members.join("; ")} }`;
  }

  /** The class values of this type are rebuilt with: arrays and `| null | undefined` unwrapped. */
  private runtimeClass(type: ts.Type): ValueRef | undefined {
    let current = type;
    if (current.flags & ts.TypeFlags.Union && !(current.flags & ts.TypeFlags.EnumLiteral)) {
      const rest = (current as ts.UnionType).types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)));
      const [only] = rest;
      if (only === undefined || rest.length !== 1) return undefined;
      current = only;
    }
    if (this.checker.isArrayType(current)) {
      const element = this.checker.getTypeArguments(current as ts.TypeReference)[0];
      if (element === undefined) return undefined;
      current = element;
    }
    const symbol = this.classSymbolOf(current);
    if (symbol === undefined) {
      // Date is declared in the default library as an interface and a constructor variable, not a class.
      const global = current.getSymbol();
      return global?.name === "Date" && isGlobalSymbol(this.program, global) ? { kind: "global", name: "Date" } : undefined;
    }
    const named = this.named(symbol);
    return named.kind === "ref" ? { kind: "class", ref: named.ref } : undefined;
  }

  private classSymbolOf(type: ts.Type): ts.Symbol | undefined {
    if (!(type.flags & ts.TypeFlags.Object)) return undefined;
    const objectType = type as ts.ObjectType;
    if (objectType.objectFlags & ts.ObjectFlags.Anonymous) return undefined;
    const symbol = objectType.objectFlags & ts.ObjectFlags.Reference ? (type as ts.TypeReference).target.getSymbol() : type.getSymbol();
    return symbol !== undefined && symbol.flags & ts.SymbolFlags.Class ? symbol : undefined;
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

/** Whether a symbol is global: declared in a default library, a script file or `declare global`. */
function isGlobalSymbol(program: ts.Program, symbol: ts.Symbol): boolean {
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
function containers(declaration: ts.Declaration): { namespaces: ts.ModuleDeclaration[]; local: boolean } {
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

function isExported(declaration: ts.Declaration): boolean {
  return (ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Export) !== 0;
}

function text(value: string): TypeExpr {
  return { kind: "text", text: value };
}

function keywordOf(type: ts.Type): string | undefined {
  const f = type.flags;
  if (f & ts.TypeFlags.Any) return "any";
  if (f & ts.TypeFlags.Unknown) return "unknown";
  if (f & ts.TypeFlags.String) return "string";
  if (f & ts.TypeFlags.Number) return "number";
  if (f & ts.TypeFlags.Boolean) return "boolean";
  if (f & ts.TypeFlags.BigInt) return "bigint";
  if (f & (ts.TypeFlags.ESSymbol | ts.TypeFlags.UniqueESSymbol)) return "symbol";
  if (f & ts.TypeFlags.Void) return "void";
  if (f & ts.TypeFlags.Undefined) return "undefined";
  if (f & ts.TypeFlags.Null) return "null";
  if (f & ts.TypeFlags.Never) return "never";
  if (f & ts.TypeFlags.NonPrimitive) return "object";
  return undefined;
}

function literalOf(type: ts.Type): string | undefined {
  const f = type.flags;
  if (f & ts.TypeFlags.EnumLiteral) return undefined;
  if (f & ts.TypeFlags.StringLiteral) return JSON.stringify((type as ts.StringLiteralType).value);
  if (f & ts.TypeFlags.NumberLiteral) return String((type as ts.NumberLiteralType).value);
  if (f & ts.TypeFlags.BigIntLiteral) {
    const value = (type as ts.BigIntLiteralType).value;
    return `${value.negative ? "-" : ""}${value.base10Value}n`;
  }
  if (f & ts.TypeFlags.BooleanLiteral) return (type as { intrinsicName?: string }).intrinsicName ?? "boolean";
  return undefined;
}

/** A union holding both `true` and `false` reads as `boolean`, the way users write it. */
function collapseBooleans(types: readonly ts.Type[]): (ts.Type | "boolean")[] {
  const isTrue = (t: ts.Type) => t.flags & ts.TypeFlags.BooleanLiteral && literalOf(t) === "true";
  const isFalse = (t: ts.Type) => t.flags & ts.TypeFlags.BooleanLiteral && literalOf(t) === "false";
  if (!types.some(isTrue) || !types.some(isFalse)) return [...types];
  const out: (ts.Type | "boolean")[] = [];
  for (const t of types) {
    if (isFalse(t)) continue;
    out.push(isTrue(t) ? "boolean" : t);
  }
  return out;
}

/** Union members in a stable order: by spelling, with `null` and `undefined` last. */
function sortUnion(parts: readonly TypeExpr[]): TypeExpr[] {
  return sortBy(parts, (p) => {
    const spelled = printType(p, declaredName);
    return spelled === "null" ? "\u{10FFFE}" : spelled === "undefined" ? "\u{10FFFF}" : spelled;
  });
}

function sortShapes(parts: readonly string[]): string[] {
  return [...parts].sort((a, b) => compare(rank(a), rank(b)));
  function rank(s: string): string {
    return s === "null" ? "\u{10FFFE}" : s === "undefined" ? "\u{10FFFF}" : s;
  }
}

function sortBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  return items
    .map((item) => ({ item, key: key(item) }))
    .sort((a, b) => compare(a.key, b.key))
    .map((e) => e.item);
}

/** Code-point order, independent of the locale the generator runs in. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function parenthesize(shape: string): string {
  return /[|&]/.test(shape) && !/^[{[]/.test(shape) ? `(${shape})` : shape;
}

/** `T | undefined` as `T`, for places written `name?: T`. */
function dropUndefined(expr: TypeExpr): TypeExpr {
  if (expr.kind !== "union") return expr;
  const kept = expr.types.filter((t) => !(t.kind === "text" && t.text === "undefined"));
  const [only] = kept;
  return only !== undefined && kept.length === 1 ? only : { kind: "union", types: kept };
}

function propertyName(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

function isReadonly(symbol: ts.Symbol): boolean {
  const declaration = symbol.valueDeclaration;
  return declaration !== undefined && (ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Readonly) !== 0;
}

/** Members that carry data through serialization: properties, not methods, accessors or private state. */
function isDataProperty(symbol: ts.Symbol): boolean {
  if (!(symbol.flags & ts.SymbolFlags.Property)) return false;
  if (symbol.name.startsWith("__@") || symbol.name.startsWith("#")) return false;
  const declaration = symbol.valueDeclaration;
  if (declaration === undefined) return true;
  const modifiers = ts.getCombinedModifierFlags(declaration);
  return (modifiers & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) === 0;
}

function valueKey(value: ValueRef): string {
  return value.kind === "class"
    ? `class:${value.ref.at.file}:${value.ref.name}`
    : `${value.kind}:${value.kind === "global" ? value.name : ""}`;
}
