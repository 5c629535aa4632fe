import { SYSTEM_STREAM_PREFIX } from "../core/ids.js";

// A log stream is a run's journal (`<workflow ID>#<run>`) or one of the engine's own streams
// (`$<family>/<name>/<n>`); workflow IDs never start with the system prefix, so the two never meet.

/** The log stream of run `runId` of workflow `id`. */
export function streamOf(id: string, runId: number): string {
  return `${id}#${runId}`;
}

/** Splits a stream name into workflow ID and run; IDs may hold '#', run numbers never do. */
export function parseStream(stream: string): { id: string; runId: number } | undefined {
  const at = stream.lastIndexOf("#");
  if (at < 0) return undefined;
  // Digits read in place: recovery parses a stream name per record. `streamOf` writes no sign, no
  // leading zero and no more digits than a safe integer has.
  const digits = stream.length - at - 1;
  if (digits < 1 || digits > 15 || stream.charCodeAt(at + 1) === 0x30) return undefined;
  let runId = 0;
  for (let i = at + 1; i < stream.length; i++) {
    const d = stream.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return undefined;
    runId = runId * 10 + d;
  }
  return { id: stream.slice(0, at), runId };
}

/** The modules that own engine streams. */
export type StreamFamily = "schedule" | "debounce" | "batch";

/** An engine stream's name, parsed: `$<family>/<name>/<n>`. */
export interface StreamName {
  readonly family: StreamFamily;
  /** The schedule's name, or the debounce or batch key. */
  readonly name: string;
  /** The schedule stream's generation, or the window's or batch's number. */
  readonly n: number;
}

const FAMILIES: readonly StreamFamily[] = ["schedule", "debounce", "batch"];

export function isSystemStream(stream: string): boolean {
  return stream.startsWith(SYSTEM_STREAM_PREFIX);
}

export function streamName(family: StreamFamily, name: string, n: number): string {
  return `${SYSTEM_STREAM_PREFIX}${family}/${name}/${n}`;
}

export function parseStreamName(stream: string): StreamName | undefined {
  if (!isSystemStream(stream)) return undefined;
  const slash = stream.indexOf("/");
  const last = stream.lastIndexOf("/");
  if (slash < 0 || last <= slash) return undefined;
  const family = stream.slice(SYSTEM_STREAM_PREFIX.length, slash) as StreamFamily;
  const n = Number(stream.slice(last + 1));
  if (!FAMILIES.includes(family) || !Number.isSafeInteger(n)) return undefined;
  return { family, name: stream.slice(slash + 1, last), n };
}
