import { RejectedError } from "./errors.js";

/** Longest workflow ID accepted, in characters. */
export const MAX_ID_LENGTH = 1000;

/**
 * The first character of the log streams the engine keeps for itself (schedules, debounce windows,
 * batches). No workflow ID may start with it, so those streams can never be taken for runs.
 */
export const SYSTEM_STREAM_PREFIX = "$";

/** Checks a workflow, update or event ID supplied by a caller. */
export function checkId(id: unknown, what = "workflow ID"): string {
  if (typeof id !== "string") throw new RejectedError(`${what} must be a string; got ${typeof id}`);
  if (id.length === 0) throw new RejectedError(`${what} is empty`);
  if (id.length > MAX_ID_LENGTH) {
    throw new RejectedError(`${what} is ${id.length} characters long; the limit is ${MAX_ID_LENGTH} (${id.slice(0, 40)}...)`);
  }
  if (what === "workflow ID" && id.startsWith(SYSTEM_STREAM_PREFIX)) {
    throw new RejectedError(`workflow ID '${id}' starts with '${SYSTEM_STREAM_PREFIX}', which is reserved for the engine's own streams; choose an ID that does not`);
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
