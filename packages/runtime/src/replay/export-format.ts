import { CodecError } from "../core/errors.js";
import type { RecordKind } from "../journal/records.js";
import { RUN_STATUSES, type RunStatusValue } from "../core/status.js";
import type { ExportedValue, JsonValue } from "./exported-value.js";

/**
 * The version of the export file format this code writes and reads; see docs/export-format.md.
 * A new version is needed for any change an older reader would misread.
 */
export const EXPORT_FORMAT = 1;

/**
 * One journal record in an export file: the record's kind and its own fields exactly as the journal
 * stores them (`at`, `seq`, `name`, ...), and `payload`, its user data (inputs, results, errors,
 * signal values, attributes) in the codec's value encoding. Records without user data (timers,
 * patches) have no payload.
 *
 * @example
 * { "kind": "step", "at": 1700000000123, "seq": 1, "name": "quote", "ok": true, "attempts": 1,
 *   "payload": { "plain": 700 } }
 */
export interface ExportedRecord {
  readonly kind: RecordKind;
  readonly at: number;
  readonly payload?: ExportedValue;
  readonly [field: string]: JsonValue | ExportedValue | undefined;
}

/**
 * The journal of one run, as an export file holds it: enough to replay the run against new code
 * without the data directory it came from.
 */
export interface ExportedJournal {
  /** {@link EXPORT_FORMAT} when written by this version. */
  readonly format: number;
  readonly workflowId: string;
  /** The workflow type name. */
  readonly type: string;
  readonly runId: number;
  /** The run's status when it was exported. */
  readonly status: RunStatusValue;
  readonly startedAt: number;
  readonly endedAt?: number;
  /** The run's journal, in order. */
  readonly records: readonly ExportedRecord[];
}

const STATUSES: ReadonlySet<string> = new Set<string>(RUN_STATUSES);

/** Fields whose type is checked wherever they appear in a record. */
const FIELD_TYPES: Readonly<Record<string, "number" | "string" | "boolean">> = {
  at: "number",
  seq: "number",
  runId: "number",
  seed: "number",
  until: "number",
  attempts: "number",
  name: "string",
  id: "string",
  type: "string",
  status: "string",
  ok: "boolean",
};

/**
 * Checks that parsed JSON is an export this version reads and returns it typed.
 *
 * @param source names the file (or other origin) in error messages.
 * @throws CodecError naming `source` and what is wrong, for example `p-1.json: records[2] has no "kind"`.
 */
export function checkExport(data: unknown, source: string): ExportedJournal {
  const fail = (what: string): never => {
    throw new CodecError(`${source} is not a valid fusee journal export: ${what}`);
  };
  if (!isObject(data)) return fail(`it holds ${describe(data)}, not an object`);
  if (data["format"] === undefined) return fail(`it has no "format" version`);
  if (data["format"] !== EXPORT_FORMAT) {
    return fail(`it has format ${JSON.stringify(data["format"])}; this version of fusee reads format ${EXPORT_FORMAT}`);
  }
  for (const key of ["workflowId", "type"] as const) {
    if (typeof data[key] !== "string" || data[key] === "") fail(`"${key}" must be a non-empty string`);
  }
  if (!isCount(data["runId"])) fail(`"runId" must be a whole number ≥ 1`);
  if (typeof data["status"] !== "string" || !STATUSES.has(data["status"])) {
    fail(`"status" must be one of ${[...STATUSES].join(", ")}; got ${JSON.stringify(data["status"])}`);
  }
  if (typeof data["startedAt"] !== "number") fail(`"startedAt" must be a number (ms since the epoch)`);
  if (data["endedAt"] !== undefined && typeof data["endedAt"] !== "number") fail(`"endedAt" must be a number when present`);
  const records = data["records"];
  if (!Array.isArray(records)) return fail(`"records" must be an array`);
  records.forEach((record: unknown, i) => checkRecord(record, `records[${i}]`, fail));
  const first = records[0] as ExportedRecord | undefined;
  if (first === undefined) fail(`"records" is empty; a journal begins with its start record`);
  else if (first.kind !== "start") fail(`records[0] is a ${first.kind} record; a journal begins with its start record`);
  return data as unknown as ExportedJournal;
}

function checkRecord(record: unknown, where: string, fail: (what: string) => never): void {
  if (!isObject(record)) fail(`${where} is ${describe(record)}, not an object`);
  const r = record as Record<string, unknown>;
  if (typeof r["kind"] !== "string") fail(`${where} has no "kind"`);
  for (const [field, value] of Object.entries(r)) {
    const expected = FIELD_TYPES[field];
    if (expected !== undefined && typeof value !== expected)
      fail(`${where} (${String(r["kind"])}): "${field}" must be a ${expected}; got ${describe(value)}`);
  }
  if (r["at"] === undefined) fail(`${where} (${String(r["kind"])}) has no "at" time`);
  const payload = r["payload"];
  if (payload !== undefined) {
    const keys = isObject(payload) ? Object.keys(payload) : [];
    if (keys.length !== 1 || (keys[0] !== "plain" && keys[0] !== "tagged")) {
      fail(`${where} (${String(r["kind"])}): "payload" must be an object with one key, "plain" or "tagged"`);
    }
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function isCount(v: unknown): boolean {
  return typeof v === "number" && Number.isInteger(v) && v >= 1;
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  return typeof v === "object" ? "an object" : `${typeof v} ${String(v)}`;
}
