import type { ExportedRecord } from "@fusee/runtime";
import { clip, toJson } from "./data-dir.js";

// Record fields shown in their own columns, not among the rest.
const SHOWN = new Set(["kind", "at", "payload"]);

/** A journal record's fields other than its kind, time and payload, as `key=value` pairs. */
export function recordFields(record: ExportedRecord): string {
  return Object.entries(record)
    .filter(([key]) => !SHOWN.has(key))
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : toJson(value)}`)
    .join(" ");
}

/** A journal record's payload as JSON, clipped to `max` characters; `indent` spaces it out. */
export function recordPayload(record: ExportedRecord, max: number, indent?: number): string {
  const p = record.payload;
  if (p === undefined) return "";
  return clip(toJson("plain" in p ? p.plain : p.tagged, indent), max);
}
