import type { TypeExpr } from "./ir.js";
import { declaredName, printType } from "./print-type.js";

/** Union members in a stable order: by spelling, with `null` and `undefined` last. */
export function sortUnion(parts: readonly TypeExpr[]): TypeExpr[] {
  return sortBy(parts, (p) => {
    const spelled = printType(p, declaredName);
    return spelled === "null" ? "\u{10FFFE}" : spelled === "undefined" ? "\u{10FFFF}" : spelled;
  });
}

export function sortShapes(parts: readonly string[]): string[] {
  return [...parts].sort((a, b) => compare(rank(a), rank(b)));
  function rank(s: string): string {
    return s === "null" ? "\u{10FFFE}" : s === "undefined" ? "\u{10FFFF}" : s;
  }
}

export function sortBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  return items
    .map((item) => ({ item, key: key(item) }))
    .sort((a, b) => compare(a.key, b.key))
    .map((e) => e.item);
}

/** Code-point order, independent of the locale the generator runs in. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
