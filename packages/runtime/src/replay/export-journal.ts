import type { PayloadCipher } from "../codec/cipher.js";
import { decodeError, decodeValue, encodeError, encodeValue } from "../codec/index.js";
import type { TypeRegistry } from "../codec/type-registry.js";
import { CodecError } from "../core/errors.js";
import {
  assembleRecord,
  decodeRecord,
  encodeRecord,
  payloadAssociatedData,
  readRecordHeader,
  readRecordPayload,
  type PayloadCodec,
  type PayloadContext,
} from "../journal/record-codec.js";
import type { JournalRecord } from "../journal/records.js";
import type { RunDetail } from "../client/types.js";
import { payloadTypes } from "../workflow/payload-types.js";
import { EXPORT_FORMAT, type ExportedJournal, type ExportedRecord } from "./export-format.js";
import { bytesOfExportedValue, exportedValueOfBytes, type JsonValue } from "./exported-value.js";

/** Options of {@link exportJournal}. */
export interface ExportJournalOptions {
  /** Where class names of payloads are looked up; the one `registerType` and `@Step({ type })` fill by default. */
  readonly registry?: TypeRegistry;
}

/** The unencrypted payload codec over a type registry, as the engine uses it without a cipher. */
export function plainCodec(registry: TypeRegistry): PayloadCodec {
  return {
    encodeValue: (value) => encodeValue(value, registry),
    decodeValue: (bytes) => decodeValue(bytes, registry),
    encodeError: (error) => encodeError(error, registry),
    decodeError: (bytes) => decodeError(bytes, registry),
  };
}

/**
 * Turns a run's status and journal, as `engine.describe(id)` or `run.describe()` returns them, into
 * an export: a self-contained, versioned JSON document that {@link writeExport} saves and a
 * {@link Replayer} replays.
 *
 * @throws CodecError when a payload cannot be encoded (an instance of a class that is no longer registered).
 * @example
 * const detail = await engine.describe("pay-1");
 * if (detail) writeExport(join("journals", exportFileName(detail.id)), exportJournal(detail));
 */
export function exportJournal(detail: RunDetail, options: ExportJournalOptions = {}): ExportedJournal {
  const codec = plainCodec(options.registry ?? payloadTypes);
  const records = detail.journal.map((record, position) => {
    const context = { workflowId: detail.id, runId: detail.runId, position };
    return exportedRecordOf(encodeRecord(record, codec, context), undefined, context, `record ${position} of '${detail.id}'`);
  });
  return {
    format: EXPORT_FORMAT,
    workflowId: detail.id,
    type: detail.type,
    runId: detail.runId,
    status: detail.status,
    startedAt: detail.startedAt,
    ...(detail.endedAt !== undefined ? { endedAt: detail.endedAt } : {}),
    records,
  };
}

/**
 * The export form of an encoded journal record (as the log stores it). A sealed payload is opened
 * with `cipher`; without one it must be unencrypted.
 */
export function exportedRecordOf(
  body: Uint8Array,
  cipher: PayloadCipher | undefined,
  context: PayloadContext,
  label: string,
): ExportedRecord {
  const { kind, ...fields } = readRecordHeader(body);
  const stored = readRecordPayload(body);
  if (stored.length === 0) return { kind, ...(fields as Record<string, JsonValue>) } as ExportedRecord;
  const plain = cipher === undefined ? stored : cipher.open(stored, payloadAssociatedData(context));
  const payload = exportedValueOfBytes(plain, `the payload of ${label} (${kind})`);
  return { kind, ...(fields as Record<string, JsonValue>), payload } as ExportedRecord;
}

/**
 * Reads the records of an export back as journal records, with the types of their payloads
 * (registered classes, dates, maps, errors) restored.
 *
 * @throws CodecError naming the record's position when a record or payload cannot be read.
 * @example
 * const records = importJournal(readExport("test/journals/pay-1.json"));
 * const steps = records.filter((r) => r.kind === "step");
 */
export function importJournal(journal: ExportedJournal, registry: TypeRegistry = payloadTypes): JournalRecord[] {
  const codec = plainCodec(registry);
  return journal.records.map((record, position) =>
    importRecord(
      record,
      codec,
      { workflowId: journal.workflowId, runId: journal.runId, position },
      `the export of '${journal.workflowId}'`,
    ),
  );
}

/** One exported record read back as a journal record (see {@link importJournal}); `codec` reads plain payloads. */
export function importRecord(record: ExportedRecord, codec: PayloadCodec, context: PayloadContext, of: string): JournalRecord {
  const { kind, payload, ...fields } = record;
  try {
    const body = assembleRecord({ kind, ...fields }, payload === undefined ? new Uint8Array(0) : bytesOfExportedValue(payload));
    return decodeRecord(body, codec, context);
  } catch (e) {
    throw new CodecError(`record ${context.position} (${kind}) of ${of} cannot be read: ${(e as Error)?.message ?? String(e)}`, {
      cause: e,
    });
  }
}
