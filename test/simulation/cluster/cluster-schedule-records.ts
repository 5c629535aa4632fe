/*
 * A schedule's records as its shard holds them in the database, one line each: what a trace shows
 * when a schedule's account fails a check, so a rare interleaving explains itself from one run.
 * Records of generations a snapshot replaced may be gone already; the latest generation's are there.
 */
import type * as Ids from "../../../packages/runtime/src/core/ids.js";
import type * as BatchRows from "../../../packages/runtime/src/storage/postgres/batch-rows.js";
import type * as Records from "../../../packages/runtime/src/journal/system-records.js";
import type { PayloadCodec } from "../../../packages/runtime/src/journal/payload-codec.js";
import { sql } from "./cluster-db.js";

// The record format and the shard of a stream are the runtime's own business: read from its build
// output, whose place relative to this file's differs between the source and the build.
const { SYSTEM_STREAM_PREFIX, shardOf } = (await import(
  new URL("../../../../packages/runtime/dist/src/core/ids.js", import.meta.url).href
)) as typeof Ids;
const { liveEntries } = (await import(
  new URL("../../../../packages/runtime/dist/src/storage/postgres/batch-rows.js", import.meta.url).href
)) as typeof BatchRows;
const { decodeSystemRecord } = (await import(
  new URL("../../../../packages/runtime/dist/src/journal/system-records.js", import.meta.url).href
)) as typeof Records;

/** The trace leaves user payloads out (a schedule's input): only the records' headers matter here. */
const NO_PAYLOADS = { decodeValue: () => [null] } as unknown as PayloadCodec;

/** The records of schedule `name`'s streams, oldest first, as lines (`gen.position kind fields`). */
export async function scheduleRecords(schema: string, shards: number, name: string): Promise<string[]> {
  const prefix = `${SYSTEM_STREAM_PREFIX}schedule/${name}/`;
  const rows = await sql<{ streams: string[]; ends: number[]; dead: number[]; body: Buffer }>(
    `SELECT streams, ends, dead, body FROM "${schema}".batches WHERE shard = $1 ORDER BY seq`,
    [shardOf(`${SYSTEM_STREAM_PREFIX}schedule/${name}`, shards)],
  );
  const lines: string[] = [];
  const positions = new Map<string, number>();
  // Entries die only with their whole stream (a generation a snapshot replaced, or the deleted
  // schedule's), so a live stream's positions count its live entries.
  for (const { stream, body } of rows.flatMap((row) => liveEntries({ ...row, seq: "" }))) {
    if (!stream.startsWith(prefix)) continue;
    const position = positions.get(stream) ?? 0;
    positions.set(stream, position + 1);
    const { kind, ...fields } = decodeSystemRecord(body, NO_PAYLOADS, { workflowId: stream, runId: 0, position }) as unknown as Record<
      string,
      unknown
    >;
    const shown = kind === "schedule-state" ? snapshotFields(fields) : fields;
    lines.push(`${stream.slice(prefix.length)}.${position} ${String(kind)} ${JSON.stringify(shown)}`);
  }
  return lines;
}

/** A snapshot's fields that tell its account, without its spec. */
function snapshotFields(f: Record<string, unknown>): Record<string, unknown> {
  const { at, paused, cursor, started, skipped, active, buffered, triggering, unsure } = f;
  return { at, paused, cursor, started, skipped, active, buffered, triggering, unsure };
}
