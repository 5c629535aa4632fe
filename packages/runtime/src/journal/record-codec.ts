import { Buffer } from "node:buffer";
import { CodecError } from "../core/errors.js";
import { parseHeaderJson } from "../core/header-json.js";
import type { PayloadCodec, PayloadContext } from "./payload-codec.js";
import { EMPTY, type Header, type PayloadReader, type PayloadWriter } from "./record-kind-descriptor.js";
import { KINDS_BY_CODE, RECORD_KINDS, kindOf, readsBackUnchanged } from "./record-kinds.js";
import type { JournalRecord, RecordKind, StepRecord } from "./records.js";

export { payloadAssociatedData, type PayloadCodec, type PayloadContext } from "./payload-codec.js";

/**
 * The body of a journal entry: `[u8 format][u8 kind][u32le header length][header JSON][payload]`.
 *
 * The header holds what the engine must read to rebuild its index on open (kind, names, sequence
 * numbers, times) and never user data; user data (inputs, results, errors, signal values, attribute
 * values) lives in the payload, which the payload codec serializes and may encrypt. Keeping the two
 * apart lets recovery skip payloads entirely. What goes where is each kind's descriptor (`record-kinds.ts`).
 */
const RECORD_FORMAT = 1;

/** The index-relevant part of a record, read without touching its payload. */
export type RecordHeader = { readonly kind: RecordKind } & Readonly<Record<string, unknown>>;

const encoder = new TextEncoder();

export function encodeRecord(record: JournalRecord, codec: PayloadCodec, context: PayloadContext): Uint8Array {
  if (record.kind === "step" && isCount(record.at) && isCount(record.seq) && isCount(record.attempts)) {
    return encodeStepRecord(record, codec, context);
  }
  const { header, payload } = splitRecord(record, codec, context);
  const json = JSON.stringify(header);
  const headerLength = Buffer.byteLength(json, "utf8");
  // Small records come from Node's buffer pool: one allocation, no zero-fill, written in place.
  const out = Buffer.allocUnsafe(6 + headerLength + payload.length);
  out[0] = RECORD_FORMAT;
  out[1] = RECORD_KINDS[record.kind].code;
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
  const kind = body.length >= 6 && body[0] === RECORD_FORMAT ? KINDS_BY_CODE[body[1] as number] : undefined;
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
  const code = Object.hasOwn(RECORD_KINDS, kind) ? RECORD_KINDS[kind].code : undefined;
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

export function decodeRecord(body: Uint8Array, codec: PayloadCodec, context: PayloadContext): JournalRecord {
  const { kind, headerEnd } = frame(body);
  const header = parseHeaderJson(body, 6, headerEnd);
  const payload = body.subarray(headerEnd);
  return kindOf(kind).decode(header, {
    value: () => codec.decodeValue(payload, context),
    error: () => codec.decodeError(payload, context),
  });
}

/**
 * The record as a replay would read it from `body`, its encoding: the record itself when decoding
 * gives back equal values of the same types, else its payload decoded from the bytes and its header
 * taken from the record, so the step path never parses back a header it has just written.
 */
export function readBackRecord(record: JournalRecord, body: Uint8Array, codec: PayloadCodec, context: PayloadContext): JournalRecord {
  if (readsBackUnchanged(record)) return record;
  const payload = body.subarray(frame(body).headerEnd);
  return decodeFromPayload(record, {
    value: () => codec.decodeValue(payload, context),
    error: () => codec.decodeError(payload, context),
  });
}

function frame(body: Uint8Array): { kind: RecordKind; headerEnd: number } {
  if (body.length < 6) throw new CodecError(`journal record of ${body.length} bytes is too short to hold a header`);
  if (body[0] !== RECORD_FORMAT) {
    throw new CodecError(`journal record has format ${body[0]}; this version of fusee reads format ${RECORD_FORMAT}`);
  }
  const kind = KINDS_BY_CODE[body[1] as number];
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
function encodeStepRecord(r: StepRecord, codec: PayloadCodec, context: PayloadContext): Uint8Array {
  // A plain JSON result is written straight into the record's buffer; anything else is encoded first.
  const prefix = codec.plainValuePrefix;
  const text = r.ok && prefix !== undefined && codec.plainValueText !== undefined ? codec.plainValueText(r.value) : undefined;
  const payload = text !== undefined ? undefined : r.ok ? codec.encodeValue(r.value, context) : codec.encodeError(r.error, context);
  const textBytes = text === undefined ? 0 : Buffer.byteLength(text, "utf8");
  const prefixBytes = payload === undefined ? (prefix as readonly number[]).length : 0;
  const payloadLength = payload === undefined ? prefixBytes + textBytes : payload.length;
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
    STEP_AT.length +
    atDigits +
    STEP_SEQ.length +
    seqDigits +
    STEP_NAME.length +
    name.length +
    ok.length +
    attemptDigits +
    (args === undefined ? 0 : STEP_ARGS.length + args.length) +
    1;
  const out = Buffer.allocUnsafe(6 + headerLength + payloadLength);
  out[0] = RECORD_FORMAT;
  out[1] = RECORD_KINDS.step.code;
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
  if (payload !== undefined) out.set(payload, at);
  else {
    for (let i = 0; i < prefixBytes; i++) out[at + i] = (prefix as readonly number[])[i] as number;
    out.write(text as string, at + prefixBytes, textBytes, "utf8");
  }
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

/** A payload writer for when only a record's header is wanted: it encodes nothing. */
const HEADER_ONLY: PayloadWriter = { value: () => EMPTY, error: () => EMPTY };

/**
 * Decodes a record from its own header fields and the payload bytes it was encoded to: what
 * `decodeRecord` of its encoding gives, without parsing the header back (the header holds numbers,
 * strings and plain objects of them, which read back equal).
 */
function decodeFromPayload(record: JournalRecord, payload: PayloadReader): JournalRecord {
  const kind = kindOf(record.kind);
  return kind.decode(kind.encode(record, HEADER_ONLY).header, payload);
}

/** Encodes the header and payload of any record through its kind's descriptor. */
function splitRecord(record: JournalRecord, codec: PayloadCodec, context: PayloadContext): { header: Header; payload: Uint8Array } {
  return kindOf(record.kind).encode(record, {
    value: (v) => codec.encodeValue(v, context),
    error: (e) => codec.encodeError(e, context),
  });
}
