/**
 * Where a value sits inside the value being encoded or decoded, kept as raw segments and rendered
 * only when an error needs it, so walking a large value costs no string building.
 */
export type PathSegment =
  string | number | { readonly mapKey: number } | { readonly mapValue: unknown; readonly index: number } | { readonly setItem: number };

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Renders a path the way it would be written in code, for example `input.items[2].cb` or
 * `result.prices.get("EUR")`.
 */
export function renderPath(label: string, segments: readonly PathSegment[]): string {
  let out = label;
  for (const s of segments) {
    if (typeof s === "string") out += IDENTIFIER.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
    else if (typeof s === "number") out += `[${s}]`;
    else if ("mapKey" in s) out += `.keys()[${s.mapKey}]`;
    else if ("mapValue" in s) out += `.get(${describeKey(s.mapValue, s.index)})`;
    else out += `.values()[${s.setItem}]`;
  }
  return out;
}

function describeKey(key: unknown, index: number): string {
  if (typeof key === "string") return JSON.stringify(key);
  if (typeof key === "number" || typeof key === "boolean") return String(key);
  if (typeof key === "bigint") return `${key}n`;
  return `<key ${index}>`;
}
