/**
 * A compact fingerprint of a step call's arguments, journaled in its step record so that replay can
 * tell two calls of one step apart: when code hands a recorded call other arguments (two calls
 * swapped, say), replay would answer it with the other call's result. Eight hex digits of FNV-1a
 * over the arguments' JSON text; `undefined` when they have no JSON form (a cycle, a function).
 */
export function fingerprintArgs(args: readonly unknown[]): string | undefined {
  if (args.length === 0) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(args, (_key, value: unknown) => (typeof value === "bigint" ? `${value}n` : value));
  } catch {
    return undefined;
  }
  if (text === undefined) return undefined;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}
