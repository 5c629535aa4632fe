import { ts } from "ts-morph";
import { DeclRefs } from "./decl-refs.js";
import type { DeclRef, ObjectMember, TypeExpr, TypeRef, ValueRef } from "./ir.js";
import { declaredName, printType } from "./print-type.js";
import type { RuntimeSymbols } from "./runtime-symbols.js";
import { sortBy, sortShapes, sortUnion } from "./text-order.js";
import { TypeShapes } from "./type-shapes.js";
import { containers, isGlobalSymbol, isReadonly } from "./type-symbols.js";
import { collapseBooleans, dropUndefined, keywordOf, literalOf, propertyName, text, valueKey } from "./type-text.js";

/** Anonymous types nest at most this deep before they are spelled `unknown`. */
const MAX_DEPTH = 8;

type Named = { readonly kind: "global"; readonly name: string } | { readonly kind: "ref"; readonly ref: DeclRef };

/**
 * Reads checker types into {@link TypeRef}s: the spelling the generated code uses (named declarations
 * kept as references to import), a structural shape for compatibility checks, and the class values
 * are rebuilt with.
 */
export class TypeRenderer {
  private readonly refs: DeclRefs;
  private readonly shapes: TypeShapes;

  constructor(
    private readonly program: ts.Program,
    private readonly checker: ts.TypeChecker,
    projectDir: string,
    runtime: RuntimeSymbols,
    /** Whether a file belongs to a dependency, which is imported by its package name. */
    isExternal: (file: ts.SourceFile) => boolean = (file) => program.isSourceFileFromExternalLibrary(file),
  ) {
    this.refs = new DeclRefs(program, checker, projectDir, runtime, isExternal);
    this.shapes = new TypeShapes(program, checker, this.refs, isExternal);
  }

  /**
   * Reads a type. With `optional`, a `| undefined` member is dropped, as for a parameter or
   * property written `name?: T`.
   */
  render(type: ts.Type, optional = false): TypeRef {
    const refs: DeclRef[] = [];
    const members = type.flags & ts.TypeFlags.Union ? this.shapes.unionParts(type as ts.UnionType) : [];
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
      shape = this.shapes.shape(only);
      structure = this.shapes.shape(only, [], 0, false);
    } else {
      const kept = collapseBooleans(parts);
      expr = {
        kind: "union",
        types: sortUnion(kept.map((t) => (t === "boolean" ? text("boolean") : this.expr(t, 1, refs)))),
      };
      shape = sortShapes([...new Set(kept.map((t) => (t === "boolean" ? "boolean" : this.shapes.shape(t))))]).join(" | ");
      const all = (type as ts.UnionType).types;
      const flat = collapseBooleans(optional ? all.filter((t) => !(t.flags & ts.TypeFlags.Undefined)) : all);
      structure = sortShapes([...new Set(flat.map((t) => (t === "boolean" ? "boolean" : this.shapes.shape(t, [], 0, false))))]).join(" | ");
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
    return this.refs.declRef(symbol);
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
      const parts = collapseBooleans(this.shapes.unionParts(type as ts.UnionType)).map((t) =>
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
}
