/**
 * True when `JSON.parse(JSON.stringify(value))` gives back an equal value of the same types: only
 * strings, booleans, null, finite numbers other than -0, arrays and objects whose prototype is
 * `Object.prototype` or null, with no undefined anywhere and no cycle.
 *
 * This is the fast path's gate: such values are written as plain JSON and read back with JSON.parse
 * alone. It allocates nothing but the ancestor stack, so the check costs a fraction of the stringify.
 */
export function isPlainJson(value: unknown): boolean {
  // A primitive (most step results) never looks at the ancestor stack: no array is made for it.
  return check(value, typeof value === "object" && value !== null ? [] : NO_ANCESTORS);
}

const NO_ANCESTORS: object[] = [];

function check(value: unknown, ancestors: object[]): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value) && (value !== 0 || 1 / value > 0);
    case "object": {
      if (value === null) return true;
      if (ancestors.includes(value)) return false;
      const proto = Object.getPrototypeOf(value) as object | null;
      if (proto === Array.prototype) {
        const items = value as unknown[];
        ancestors.push(items);
        for (let i = 0; i < items.length; i++) if (!check(items[i], ancestors)) return false;
        ancestors.pop();
        return true;
      }
      if (proto !== Object.prototype && proto !== null) return false;
      const record = value as Record<string, unknown>;
      ancestors.push(record);
      for (const key in record) if (!check(record[key], ancestors)) return false;
      ancestors.pop();
      return true;
    }
    default:
      return false;
  }
}
