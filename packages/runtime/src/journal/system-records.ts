import { CodecError } from "../core/errors.js";
import type { PayloadCodec, PayloadContext } from "./payload-codec.js";
import type { EarlierCoverage, RecurrenceSpec } from "./schedule-coverage.js";

/**
 * Records of the engine's own streams (schedules, debounce windows, batches), kept in the same log
 * as run journals. Their body has the journal's layout, `[u8 format][u8 kind][u32le header
 * length][header JSON][payload]`, under a format byte of its own (0x81) so it is never read as a
 * journal record. User data (a schedule's input, a debounced input, a batched event) is the
 * payload, serialized and encrypted by the engine's payload codec like any run input.
 */
const SYSTEM_RECORD_FORMAT = 0x81;

/** A schedule's full state: the first record of each generation of its stream. */
export interface ScheduleStateRecord {
  readonly kind: "schedule-state";
  readonly at: number;
  readonly workflow: string;
  readonly everyMs?: number;
  readonly cron?: string;
  readonly timezone?: string;
  readonly overlap: string;
  readonly catchUp: string;
  readonly input: unknown;
  readonly paused: boolean;
  /**
   * When the pause in force was recorded; absent when not paused or paused at creation. Instants
   * due before it that an engine missed while down are still caught up.
   */
  readonly pausedAt?: number;
  /** The latest instant the live ticker has dealt with. */
  readonly cursor: number;
  readonly started: number;
  readonly skipped: number;
  /** Time ranges whose every instant was started or skipped, as `[first, last]` pairs. */
  readonly covered: readonly (readonly [number, number])[];
  /** The ranges covered under specs the schedule had before (see `ScheduleCoverage`); absent when none. */
  readonly earlier?: readonly EarlierCoverage[];
  readonly recent: readonly string[];
  readonly active: readonly string[];
  readonly buffered?: number;
  readonly backfills: readonly {
    readonly id: string;
    readonly next: number;
    readonly to: number;
    readonly catchUp: boolean;
    /** The spec whose instants the backfill starts, when the schedule's spec changed since it was asked for. */
    readonly spec?: RecurrenceSpec;
  }[];
  /** Triggered instants whose run was being started (see `ScheduleTickRecord`); absent when none. */
  readonly triggering?: readonly number[];
  /** Instants whose run may yet appear (see `ScheduleSkipRecord`); absent when none. */
  readonly unsure?: readonly UnsureInstant[];
  /** The latest forwarded requests a trigger performed (see `ScheduleTickRecord.request`); absent when none. */
  readonly triggeredBy?: readonly string[];
}

/**
 * An instant whose run a holder of the schedule's shard that stopped may have asked for, without a
 * record saying so: the start may be performed late (its request waited for the run's shard to get
 * an owner). Holders look for the run until `until`, and count it if it appears.
 */
export interface UnsureInstant {
  readonly instant: number;
  readonly until: number;
}

/**
 * One instant dealt with: its run started, the instant skipped, or buffered behind a running run.
 * `triggering` comes before the start of a triggered instant's run, whose ID no recurrence gives: a
 * crash that kept the run and lost its `started` record leaves the instant for the next open to
 * finish (adopt the run, or start it).
 */
export interface ScheduleTickRecord {
  readonly kind: "schedule-tick";
  readonly at: number;
  readonly instant: number;
  readonly outcome: "started" | "skipped" | "buffered" | "triggering";
  readonly source: "live" | "trigger" | "buffer";
  /**
   * On a trigger's first tick, the ID of the forwarded request it performs: asked again of the
   * shard's next owner (the one that performed it died before answering), the trigger is found
   * performed. Absent for a trigger made where the schedule lives.
   */
  readonly request?: string;
}

/** Instants of `[from, to]` that the ticker skipped (catch-up policy); moves the cursor to `to`. */
export interface ScheduleSkipRecord {
  readonly kind: "schedule-skip";
  readonly at: number;
  readonly from: number;
  readonly to: number;
  readonly count: number;
  /** Instants of the span whose run may yet appear, looked for after the skip; absent when none. */
  readonly unsure?: readonly UnsureInstant[];
}

/** Paused or resumed; a resume moves the cursor to `at`, so paused time is not caught up. */
export interface SchedulePauseRecord {
  readonly kind: "schedule-pause";
  readonly at: number;
  readonly paused: boolean;
}

/** A backfill of `[from, to]` accepted; a catch-up backfill also moves the cursor to `to`. */
export interface ScheduleBackfillRecord {
  readonly kind: "schedule-backfill";
  readonly at: number;
  readonly id: string;
  readonly from: number;
  readonly to: number;
  readonly catchUp: boolean;
}

/** A page of a backfill done: every instant of `[first, through]` was started or already covered. */
export interface ScheduleBackfillPageRecord {
  readonly kind: "schedule-backfill-page";
  readonly at: number;
  readonly id: string;
  readonly first: number;
  readonly through: number;
  readonly started: number;
}

/** An event of a debounce window (the first one opens it and fixes its rule). */
export interface DebounceEventRecord {
  readonly kind: "debounce-event";
  readonly at: number;
  readonly type: string;
  readonly eventId?: string;
  readonly delayMs: number;
  readonly maxWaitMs?: number;
  readonly input: unknown;
}

/** An event of a batch (the first one opens it and fixes its rule). */
export interface BatchEventRecord {
  readonly kind: "batch-event";
  readonly at: number;
  readonly type: string;
  readonly eventId?: string;
  readonly size: number;
  readonly timeoutMs: number;
  readonly event: unknown;
}

/** The window's or batch's run was started (or found started). */
export interface FiredRecord {
  readonly kind: "debounce-fired" | "batch-fired";
  readonly at: number;
}

export type SystemRecord =
  | ScheduleStateRecord
  | ScheduleTickRecord
  | ScheduleSkipRecord
  | SchedulePauseRecord
  | ScheduleBackfillRecord
  | ScheduleBackfillPageRecord
  | DebounceEventRecord
  | BatchEventRecord
  | FiredRecord;

type SystemKind = SystemRecord["kind"];

const KIND_CODES: Record<SystemKind, number> = {
  "schedule-state": 1,
  "schedule-tick": 2,
  "schedule-skip": 3,
  "schedule-pause": 4,
  "schedule-backfill": 5,
  "schedule-backfill-page": 6,
  "debounce-event": 7,
  "debounce-fired": 8,
  "batch-event": 9,
  "batch-fired": 10,
};
const KINDS_BY_CODE = new Map<number, SystemKind>(Object.entries(KIND_CODES).map(([k, v]) => [v, k as SystemKind]));

// The field of each kind that holds user data, if any.
const PAYLOAD_FIELD: Partial<Record<SystemKind, "input" | "event">> = {
  "schedule-state": "input",
  "debounce-event": "input",
  "batch-event": "event",
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeSystemRecord(record: SystemRecord, codec: PayloadCodec, context: PayloadContext): Uint8Array {
  const field = PAYLOAD_FIELD[record.kind];
  const header: Record<string, unknown> = { ...record };
  delete header.kind;
  let payload: Uint8Array = new Uint8Array(0);
  if (field !== undefined) {
    delete header[field];
    // Wrapped in an array, so `undefined` round-trips like any other value.
    payload = codec.encodeValue([(record as unknown as Record<string, unknown>)[field]], context);
  }
  const headerBytes = encoder.encode(JSON.stringify(header));
  const out = new Uint8Array(6 + headerBytes.length + payload.length);
  out[0] = SYSTEM_RECORD_FORMAT;
  out[1] = KIND_CODES[record.kind];
  new DataView(out.buffer, out.byteOffset, out.byteLength).setUint32(2, headerBytes.length, true);
  out.set(headerBytes, 6);
  out.set(payload, 6 + headerBytes.length);
  return out;
}

export function decodeSystemRecord(body: Uint8Array, codec: PayloadCodec, context: PayloadContext): SystemRecord {
  const where = `record ${context.position} of stream '${context.workflowId}'`;
  if (body.length < 6) throw new CodecError(`${where} is ${body.length} bytes, too short to hold a header`);
  if (body[0] !== SYSTEM_RECORD_FORMAT) {
    throw new CodecError(`${where} has format ${body[0]}; this version of fusee reads engine records of format ${SYSTEM_RECORD_FORMAT}`);
  }
  const kind = KINDS_BY_CODE.get(body[1] as number);
  if (kind === undefined) throw new CodecError(`${where} has unknown kind code ${body[1]}`);
  const headerEnd = 6 + new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(2, true);
  if (headerEnd > body.length) throw new CodecError(`${where} has a header running past the record's end`);
  const record = JSON.parse(decoder.decode(body.subarray(6, headerEnd))) as Record<string, unknown>;
  record.kind = kind;
  const field = PAYLOAD_FIELD[kind];
  if (field !== undefined) record[field] = (codec.decodeValue(body.subarray(headerEnd), context) as unknown[])[0];
  return record as unknown as SystemRecord;
}
