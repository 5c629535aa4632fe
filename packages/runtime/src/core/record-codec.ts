import { Buffer } from "node:buffer";
import { CodecError } from "./errors.js";
import { parseHeaderJson } from "./header-json.js";
import type { JournalRecord, RecordKind } from "./records.js";

/**
 * The body of a journal entry: `[u8 format][u8 kind][u32le header length][header JSON][payload]`.
 *
 * The header holds what the engine must read to rebuild its index on open (kind, names, sequence
 * numbers, times) and never user data; user data (inputs, results, errors, signal values, attribute
 * values) lives in the payload, which the payload codec serializes and may encrypt. Keeping the two
 * apart lets recovery skip payloads entirely.
 */
export const RECORD_FORMAT = 1;

const KIND_CODES: Record<RecordKind, number> = {
  start: 1,
  step: 2,
  signal: 3,
  update: 4,
  "update-result": 5,
  timer: 6,
  fired: 7,
  patch: 8,
  attributes: 9,
  finish: 10,
  heartbeat: 11,
  completion: 12,
  child: 13,
  "child-result": 14,
  cancel: 15,
  attempt: 16,
};
/** Record kinds by their code, for every byte value (undefined where no kind has the code). */
const KINDS_BY_BYTE: readonly (RecordKind | undefined)[] = Array.from({ length: 256 }, (_, code) =>
  (Object.keys(KIND_CODES) as RecordKind[]).find((kind) => KIND_CODES[kind] === code),
);

/** Identifies the record a payload belongs to; ciphers bind payloads to it. */
export interface PayloadContext {
  readonly workflowId: string;
  readonly runId: number;
  readonly position: number;
}

/** How user data inside records is turned into bytes and back. */
export interface PayloadCodec {
  encodeValue(value: unknown, context: PayloadContext): Uint8Array;
  decodeValue(bytes: Uint8Array, context: PayloadContext): unknown;
  encodeError(error: unknown, context: PayloadContext): Uint8Array;
  decodeError(bytes: Uint8Array, context: PayloadContext): Error;
}

/** The index-relevant part of a record, read without touching its payload. */
export type RecordHeader = { readonly kind: RecordKind } & Readonly<Record<string, unknown>>;

const encoder = new TextEncoder();
const EMPTY = new Uint8Array(0);

export function encodeRecord(record: JournalRecord, codec: PayloadCodec, context: PayloadContext): Uint8Array {
  if (record.kind === "step" && isCount(record.at) && isCount(record.seq) && isCount(record.attempts)) {
    return encodeStepRecord(record, codec, context);
  }
  const { header, payload } = split(record, codec, context);
  const json = JSON.stringify(header);
  const headerLength = Buffer.byteLength(json, "utf8");
  // Small records come from Node's buffer pool: one allocation, no zero-fill, written in place.
  const out = Buffer.allocUnsafe(6 + headerLength + payload.length);
  out[0] = RECORD_FORMAT;
  out[1] = KIND_CODES[record.kind];
  out.writeUInt32LE(headerLength, 2);
  out.write(json, 6, headerLength, "utf8");
  out.set(payload, 6 + headerLength);
  return out;
}

/** Reads the kind and header of an encoded record; payloads stay untouched (and encrypted). */
export function readRecordHeader(body: Uint8Array): RecordHeader {
  const { kind, headerEnd } = frame(body);
  const header = parseHeaderJson(body, 6, headerEnd);
  header.kind = kind;
  return header as RecordHeader;
}

/** The kind of an encoded record, read from its second byte without parsing anything. */
export function readRecordKind(body: Uint8Array): RecordKind {
  // Recovery asks this of every record: the common case allocates nothing; the rest throws as `frame` does.
  const kind = body.length >= 6 && body[0] === RECORD_FORMAT ? KINDS_BY_BYTE[body[1] as number] : undefined;
  return kind ?? frame(body).kind;
}

/** The payload of an encoded record as stored: sealed when a cipher is configured, empty for some kinds. */
export function readRecordPayload(body: Uint8Array): Uint8Array {
  return body.subarray(frame(body).headerEnd);
}

/**
 * Builds an encoded record from a header as {@link readRecordHeader} gives it and a payload as
 * {@link readRecordPayload} gives it, the inverse of those two (export files keep records that way).
 *
 * @throws CodecError when the header names no known record kind.
 */
export function assembleRecord(header: RecordHeader, payload: Uint8Array): Uint8Array {
  const { kind, ...fields } = header;
  const code = Object.hasOwn(KIND_CODES, kind) ? KIND_CODES[kind] : undefined;
  if (code === undefined) throw new CodecError(`'${String(kind)}' is not a journal record kind`);
  const headerBytes = encoder.encode(JSON.stringify(fields));
  const out = new Uint8Array(6 + headerBytes.length + payload.length);
  out[0] = RECORD_FORMAT;
  out[1] = code;
  new DataView(out.buffer, out.byteOffset, out.byteLength).setUint32(2, headerBytes.length, true);
  out.set(headerBytes, 6);
  out.set(payload, 6 + headerBytes.length);
  return out;
}

/**
 * The associated data a cipher binds a record's payload to (workflow ID, run and position), so a
 * sealed payload copied into another record fails to open there.
 */
export function payloadAssociatedData(context: PayloadContext): Uint8Array {
  return encoder.encode(`${context.workflowId}\u0000${context.runId}\u0000${context.position}`);
}

export function decodeRecord(body: Uint8Array, codec: PayloadCodec, context: PayloadContext): JournalRecord {
  const { kind, headerEnd } = frame(body);
  const h = parseHeaderJson(body, 6, headerEnd) as Record<string, any>;
  const payload = body.subarray(headerEnd);
  const value = (): unknown => codec.decodeValue(payload, context);
  const outcome = (): { value?: unknown; error?: Error } =>
    h.ok === false || (h.status !== undefined && h.status !== "ok")
      ? { error: codec.decodeError(payload, context) }
      : { value: value() };
  switch (kind) {
    case "start": {
      const [input, updateArg] = value() as [unknown, unknown];
      return {
        kind, at: h.at, type: h.type, runId: h.runId, seed: h.seed, input,
        ...(h.update ? { update: { id: h.update.id, name: h.update.name, arg: updateArg } } : {}),
        ...(h.from ? { from: h.from } : {}),
        ...(h.parent ? { parent: h.parent } : {}),
        ...request(h),
      };
    }
    case "heartbeat":
      return { kind, at: h.at, seq: h.seq, progress: value() };
    case "attempt":
      return { kind, at: h.at, seq: h.seq, name: h.name, attempt: h.attempt, retryAt: h.retryAt, error: codec.decodeError(payload, context) };
    case "completion": {
      // The token is a bearer capability, so it travels in the (encryptable) payload, not the header.
      const answer = value() as { token: string; value?: unknown; error?: Error };
      return { kind, at: h.at, token: answer.token, ok: h.ok, ...(h.ok ? { value: answer.value } : { error: answer.error as Error }), ...request(h) };
    }
    case "child":
      return {
        kind, at: h.at, seq: h.seq, childId: h.childId, ok: h.ok,
        ...(h.ok ? { childRunId: h.childRunId, close: h.close } : { error: codec.decodeError(payload, context) }),
      };
    case "child-result":
      return { kind, at: h.at, seq: h.seq, childId: h.childId, status: h.status, ...outcome() };
    case "cancel":
      return { kind, at: h.at, reason: value() as string, ...request(h) };
    case "step":
      return { kind, at: h.at, seq: h.seq, name: h.name, ok: h.ok, attempts: h.attempts, ...(typeof h.args === "string" ? { args: h.args } : {}), ...outcome() };
    case "signal":
      return { kind, at: h.at, name: h.name, value: value(), ...request(h) };
    case "update":
      return { kind, at: h.at, id: h.id, name: h.name, arg: value() };
    case "update-result":
      return { kind, at: h.at, id: h.id, ok: h.ok, ...outcome() };
    case "timer":
      return { kind, at: h.at, seq: h.seq, until: h.until };
    case "fired":
      return { kind, at: h.at, seq: h.seq };
    case "patch":
      return { kind, at: h.at, seq: h.seq, id: h.id };
    case "attributes":
      return { kind, at: h.at, seq: h.seq, attributes: value() as Record<string, unknown> };
    case "finish":
      return { kind, at: h.at, status: h.status, ...(h.status === "ok" ? { value: value() } : { error: codec.decodeError(payload, context) }), ...request(h) };
  }
}

function frame(body: Uint8Array): { kind: RecordKind; headerEnd: number } {
  if (body.length < 6) throw new CodecError(`journal record of ${body.length} bytes is too short to hold a header`);
  if (body[0] !== RECORD_FORMAT) {
    throw new CodecError(`journal record has format ${body[0]}; this version of fusee reads format ${RECORD_FORMAT}`);
  }
  const kind = KINDS_BY_BYTE[body[1] as number];
  if (kind === undefined) throw new CodecError(`journal record has unknown kind code ${body[1]}`);
  const headerLength = ((body[2] as number) | ((body[3] as number) << 8) | ((body[4] as number) << 16) | ((body[5] as number) << 24)) >>> 0;
  const headerEnd = 6 + headerLength;
  if (headerEnd > body.length) throw new CodecError(`journal record header (${headerLength} bytes) runs past the record's end`);
  return { kind, headerEnd };
}

/** Each step name seen, as the UTF-8 bytes of its JSON text, for step records written byte by byte. */
const quotedNameBytes = new Map<string, Buffer>();
const MAX_QUOTED_NAMES = 1024;

const STEP_AT = Buffer.from('{"at":');
const STEP_SEQ = Buffer.from(',"seq":');
const STEP_NAME = Buffer.from(',"name":');
const STEP_OK = Buffer.from(',"ok":true,"attempts":');
const STEP_FAILED = Buffer.from(',"ok":false,"attempts":');
const STEP_ARGS = Buffer.from(',"args":');

/** A whole number from 0 to 2^53 - 1, which `JSON.stringify` writes as plain digits. */
function isCount(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/**
 * A step record written straight into its buffer: the header's bytes are exactly those of
 * `JSON.stringify({ at, seq, name, ok, attempts, args })`, without the strings that building that text
 * would cost (the numbers' digits and their concatenation), for the record every step makes.
 */
function encodeStepRecord(r: Extract<JournalRecord, { kind: "step" }>, codec: PayloadCodec, context: PayloadContext): Uint8Array {
  const payload = r.ok ? codec.encodeValue(r.value, context) : codec.encodeError(r.error, context);
  let name = quotedNameBytes.get(r.name);
  if (name === undefined) {
    name = Buffer.from(JSON.stringify(r.name), "utf8");
    if (quotedNameBytes.size < MAX_QUOTED_NAMES) quotedNameBytes.set(r.name, name);
  }
  const ok = r.ok ? STEP_OK : STEP_FAILED;
  const atDigits = digitCount(r.at);
  const seqDigits = digitCount(r.seq);
  const attemptDigits = digitCount(r.attempts);
  const args = r.args === undefined ? undefined : Buffer.from(JSON.stringify(r.args), "utf8");
  const headerLength =
    STEP_AT.length + atDigits + STEP_SEQ.length + seqDigits + STEP_NAME.length + name.length + ok.length + attemptDigits + (args === undefined ? 0 : STEP_ARGS.length + args.length) + 1;
  const out = Buffer.allocUnsafe(6 + headerLength + payload.length);
  out[0] = RECORD_FORMAT;
  out[1] = KIND_CODES.step;
  out.writeUInt32LE(headerLength, 2);
  let at = 6;
  at = put(out, at, STEP_AT);
  at = putDigits(out, at, r.at, atDigits);
  at = put(out, at, STEP_SEQ);
  at = putDigits(out, at, r.seq, seqDigits);
  at = put(out, at, STEP_NAME);
  at = put(out, at, name);
  at = put(out, at, ok);
  at = putDigits(out, at, r.attempts, attemptDigits);
  if (args !== undefined) {
    at = put(out, at, STEP_ARGS);
    at = put(out, at, args);
  }
  out[at++] = 0x7d;
  out.set(payload, at);
  return out;
}

function digitCount(n: number): number {
  let digits = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  return digits;
}

function put(out: Buffer, at: number, bytes: Uint8Array): number {
  out.set(bytes, at);
  return at + bytes.length;
}

/** Writes the `digits` decimal digits of `n` at `at`, most significant first. */
function putDigits(out: Buffer, at: number, n: number, digits: number): number {
  let rest = n;
  for (let i = at + digits - 1; i >= at; i--) {
    out[i] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return at + digits;
}

function split(r: JournalRecord, codec: PayloadCodec, ctx: PayloadContext): { header: object; payload: Uint8Array } {
  switch (r.kind) {
    case "start":
      return {
        header: {
          at: r.at, type: r.type, runId: r.runId, seed: r.seed,
          ...(r.update ? { update: { id: r.update.id, name: r.update.name } } : {}),
          ...(r.from ? { from: r.from } : {}),
          ...(r.parent ? { parent: r.parent } : {}),
          ...request(r),
        },
        payload: codec.encodeValue([r.input, r.update?.arg], ctx),
      };
    case "heartbeat":
      return { header: { at: r.at, seq: r.seq }, payload: codec.encodeValue(r.progress, ctx) };
    case "attempt":
      return { header: { at: r.at, seq: r.seq, name: r.name, attempt: r.attempt, retryAt: r.retryAt }, payload: codec.encodeError(r.error, ctx) };
    case "completion":
      return {
        header: { at: r.at, ok: r.ok, ...request(r) },
        payload: codec.encodeValue(r.ok ? { token: r.token, value: r.value } : { token: r.token, error: r.error }, ctx),
      };
    case "child":
      return {
        header: { at: r.at, seq: r.seq, childId: r.childId, ok: r.ok, ...(r.ok ? { childRunId: r.childRunId, close: r.close } : {}) },
        payload: r.ok ? EMPTY : codec.encodeError(r.error, ctx),
      };
    case "child-result":
      return {
        header: { at: r.at, seq: r.seq, childId: r.childId, status: r.status },
        payload: r.status === "ok" ? codec.encodeValue(r.value, ctx) : codec.encodeError(r.error, ctx),
      };
    case "cancel":
      return { header: { at: r.at, ...request(r) }, payload: codec.encodeValue(r.reason, ctx) };
    case "step":
      // Written by `encodeStepRecord` instead whenever its times and counts are whole numbers.
      return {
        header: { at: r.at, seq: r.seq, name: r.name, ok: r.ok, attempts: r.attempts, ...(r.args === undefined ? {} : { args: r.args }) },
        payload: r.ok ? codec.encodeValue(r.value, ctx) : codec.encodeError(r.error, ctx),
      };
    case "signal":
      return { header: { at: r.at, name: r.name, ...request(r) }, payload: codec.encodeValue(r.value, ctx) };
    case "update":
      return { header: { at: r.at, id: r.id, name: r.name }, payload: codec.encodeValue(r.arg, ctx) };
    case "update-result":
      return {
        header: { at: r.at, id: r.id, ok: r.ok },
        payload: r.ok ? codec.encodeValue(r.value, ctx) : codec.encodeError(r.error, ctx),
      };
    case "timer":
      return { header: { at: r.at, seq: r.seq, until: r.until }, payload: EMPTY };
    case "fired":
      return { header: { at: r.at, seq: r.seq }, payload: EMPTY };
    case "patch":
      return { header: { at: r.at, seq: r.seq, id: r.id }, payload: EMPTY };
    case "attributes":
      return { header: { at: r.at, seq: r.seq }, payload: codec.encodeValue(r.attributes, ctx) };
    case "finish":
      return {
        header: { at: r.at, status: r.status, ...request(r) },
        payload: r.status === "ok" ? codec.encodeValue(r.value, ctx) : codec.encodeError(r.error, ctx),
      };
  }
}

/** The `request` field of a record or header, when it has one (records a cluster request performed). */
function request(from: { readonly request?: unknown }): { request?: string } {
  return typeof from.request === "string" ? { request: from.request } : {};
}
