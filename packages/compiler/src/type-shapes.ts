import { ts } from "ts-morph";
import type { DeclRefs } from "./decl-refs.js";
import { compare, sortShapes } from "./text-order.js";
import { isDataProperty, isGlobalSymbol } from "./type-symbols.js";
import { collapseBooleans, keywordOf, literalOf, parenthesize, propertyName } from "./type-text.js";

/** Named types are expanded this deep in compatibility shapes. */
const MAX_SHAPE_DEPTH = 6;

/** Spells types structurally, for the compatibility checks of the lock. */
export class TypeShapes {
  private readonly shapes = new Map<ts.Type, string>();
  private readonly structures = new Map<ts.Type, string>();

  constructor(
    private readonly program: ts.Program,
    private readonly checker: ts.TypeChecker,
    private readonly refs: DeclRefs,
    private readonly isExternal: (file: ts.SourceFile) => boolean,
  ) {}

  /**
   * The members of a union, flattened as the checker holds them, except that a named union a
   * dependency declares (`Duration | null`) stays one member, as written.
   */
  unionParts(type: ts.UnionType): readonly ts.Type[] {
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
    const name = this.refs.declRef(symbol).name;
    return args.length === 0 ? name : `${name}<${args.map((a) => this.shape(a, next, depth + 1)).join(", ")}>`;
  }

  /** A structural spelling with named types expanded to their data members, for compatibility checks. */
  /** The shape of a type; with `named` false, dependencies' types are expanded too (the structure). */
  shape(type: ts.Type, stack: readonly ts.Type[] = [], depth = 0, named = true): string {
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
}
