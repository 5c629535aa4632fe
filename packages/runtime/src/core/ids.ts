import { RejectedError } from "./errors.js";

/** Longest workflow ID accepted, in characters. */
const MAX_ID_LENGTH = 1000;

/**
 * The first character of the log streams the engine keeps for itself (schedules, debounce windows,
 * batches). No workflow ID may start with it, so those streams can never be taken for runs.
 */
export const SYSTEM_STREAM_PREFIX = "$";

/** A UTF-16 code unit that is half of a surrogate pair with no other half beside it. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why `text` cannot become a key, or `undefined` when it can: a lone surrogate has no UTF-8 form
 * (it would be written as U+FFFD), so two strings differing only there would share one key on disk.
 */
export function illFormed(text: string, what: string): string | undefined {
  const at = text.search(LONE_SURROGATE);
  if (at < 0) return undefined;
  const unit = text.charCodeAt(at).toString(16).toUpperCase();
  return `${what} ${JSON.stringify(text.slice(0, 40))} holds a lone surrogate (U+${unit} at index ${at}), which has no UTF-8 form; use well-formed Unicode text`;
}

/** Throws a `RejectedError` when `text` is not well-formed UTF-16 (see {@link illFormed}). */
export function checkWellFormed(text: string, what: string): string {
  const problem = illFormed(text, what);
  if (problem !== undefined) throw new RejectedError(problem);
  return text;
}

/**
 * Checks a name supplied at run time (an inline step, a signal waited for, a patch, a query, an
 * update, a limit, an attribute): a non-empty, well-formed string.
 */
export function checkName(name: unknown, what: string): string {
  if (typeof name !== "string" || name.length === 0)
    throw new RejectedError(`${what} must be a non-empty string; got ${JSON.stringify(name)}`);
  return checkWellFormed(name, what);
}

/** Checks an update or event ID supplied by a caller: a non-empty, well-formed string of bounded length. */
export function checkId(id: unknown, what: string): string {
  if (typeof id !== "string") throw new RejectedError(`${what} must be a string; got ${typeof id}`);
  if (id.length === 0) throw new RejectedError(`${what} is empty`);
  checkWellFormed(id, what);
  if (id.length > MAX_ID_LENGTH) {
    throw new RejectedError(`${what} is ${id.length} characters long; the limit is ${MAX_ID_LENGTH} (${id.slice(0, 40)}...)`);
  }
  return id;
}

/**
 * Checks a workflow ID wherever one enters (a start, a child, a message, a call on a run): what
 * {@link checkId} checks, and that it does not start with the prefix of the engine's own streams,
 * which a run of that ID would be taken for when the data is read again.
 */
export function checkWorkflowId(id: unknown, what = "workflow ID"): string {
  checkId(id, what);
  if ((id as string).startsWith(SYSTEM_STREAM_PREFIX)) {
    throw new RejectedError(
      `${what} '${id as string}' starts with '${SYSTEM_STREAM_PREFIX}', which is reserved for the engine's own streams; choose an ID that does not`,
    );
  }
  return id as string;
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
