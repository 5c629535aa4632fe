import { ts } from "ts-morph";
import type { TypeExpr, ValueRef } from "./ir.js";

export function text(value: string): TypeExpr {
  return { kind: "text", text: value };
}

export function keywordOf(type: ts.Type): string | undefined {
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

export function literalOf(type: ts.Type): string | undefined {
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
export function collapseBooleans(types: readonly ts.Type[]): (ts.Type | "boolean")[] {
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

export function parenthesize(shape: string): string {
  return /[|&]/.test(shape) && !/^[{[]/.test(shape) ? `(${shape})` : shape;
}

/** `T | undefined` as `T`, for places written `name?: T`. */
export function dropUndefined(expr: TypeExpr): TypeExpr {
  if (expr.kind !== "union") return expr;
  const kept = expr.types.filter((t) => !(t.kind === "text" && t.text === "undefined"));
  const [only] = kept;
  return only !== undefined && kept.length === 1 ? only : { kind: "union", types: kept };
}

export function propertyName(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

export function valueKey(value: ValueRef): string {
  return value.kind === "class"
    ? `class:${value.ref.at.file}:${value.ref.name}`
    : `${value.kind}:${value.kind === "global" ? value.name : ""}`;
}
