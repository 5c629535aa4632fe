import { RejectedError } from "./errors.js";

/** Longest workflow ID accepted, in characters. */
export const MAX_ID_LENGTH = 1000;

/** Checks a workflow, update or event ID supplied by a caller. */
export function checkId(id: unknown, what = "workflow ID"): string {
  if (typeof id !== "string") throw new RejectedError(`${what} must be a string; got ${typeof id}`);
  if (id.length === 0) throw new RejectedError(`${what} is empty`);
  if (id.length > MAX_ID_LENGTH) {
    throw new RejectedError(`${what} is ${id.length} characters long; the limit is ${MAX_ID_LENGTH} (${id.slice(0, 40)}...)`);
  }
  return id;
}

/** FNV-1a over UTF-16 code units: stable across processes and versions, which shard placement needs. */
export function shardOf(id: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}
