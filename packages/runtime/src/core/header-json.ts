import { Buffer } from "node:buffer";
import { latin1Text, utf8Text } from "./buffer-text.js";

/*
 * Record headers are small JSON objects the engine writes itself (`JSON.stringify` of a flat object
 * of numbers, short strings and booleans), and recovery reads one per record. Parsing them straight
 * from the bytes skips decoding the header into a string and V8's general parser: about 0.2 us of
 * 0.45 us per header on the target machine. Anything this reader does not expect (a nested
 * object, an escape, whitespace) goes to `JSON.parse`, so every valid header reads the same
 * either way.
 */

const QUOTE = 0x22;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const BACKSLASH = 0x5c;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** Integers of up to 15 digits are exact when accumulated digit by digit. */
const MAX_FAST_DIGITS = 15;

/**
 * Property names met so far, by a hash of their bytes: headers repeat a handful of names, and an
 * interned name costs neither an allocation nor a string-table lookup when it becomes a property.
 */
const names = new Map<number, string>();
const MAX_NAMES = 256;

/**
 * Parses the JSON object in `bytes[start, end)`.
 *
 * @throws SyntaxError as `JSON.parse` does when the bytes are not a JSON object.
 */
export function parseHeaderJson(bytes: Uint8Array, start: number, end: number): Record<string, unknown> {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return parseFlat(buf, start, end) ?? (JSON.parse(buf.toString("utf8", start, end)) as Record<string, unknown>);
}

function parseFlat(b: Buffer, start: number, end: number): Record<string, unknown> | undefined {
  if (end - start < 2 || b[start] !== OPEN || b[end - 1] !== CLOSE) return undefined;
  const out: Record<string, unknown> = {};
  let i = start + 1;
  if (i === end - 1) return out;
  for (;;) {
    // A name: plain ASCII between quotes.
    if (b[i] !== QUOTE) return undefined;
    const nameStart = ++i;
    let hash = 0;
    for (; i < end; i++) {
      const c = b[i]!;
      if (c === QUOTE) break;
      if (c === BACKSLASH || c >= 0x80) return undefined;
      hash = (Math.imul(hash, 31) + c) | 0;
    }
    if (i >= end) return undefined;
    const name = nameOf(b, nameStart, i, hash);
    if (b[++i] !== COLON) return undefined;
    i++;
    // A value: a number, a string without escapes, true, false or null.
    const c = b[i];
    let value: unknown;
    if (c === QUOTE) {
      const valueStart = ++i;
      let ascii = true;
      for (; i < end; i++) {
        const d = b[i]!;
        if (d === QUOTE) break;
        if (d === BACKSLASH) return undefined;
        if (d >= 0x80) ascii = false;
      }
      if (i >= end) return undefined;
      value = ascii ? latin1Text(b, valueStart, i) : utf8Text(b, valueStart, i);
      i++;
    } else if (c === MINUS || (c !== undefined && c >= ZERO && c <= NINE)) {
      value = readNumber(b, i, end);
      if (value === undefined) return undefined;
      i = numberEnd;
      if (b[i] !== COMMA && b[i] !== CLOSE) return undefined;
    } else if (c === OPEN_LIST) {
      // A list of numbers (a start record's flags); anything else in a list goes to JSON.parse.
      const list: number[] = [];
      i++;
      if (b[i] === CLOSE_LIST) i++;
      else
        for (;;) {
          const n = readNumber(b, i, end);
          if (n === undefined) return undefined;
          list.push(n);
          i = numberEnd;
          if (b[i] === COMMA) i++;
          else if (b[i] === CLOSE_LIST) {
            i++;
            break;
          } else return undefined;
        }
      value = list;
    } else if (c === 0x74 && b[i + 1] === 0x72 && b[i + 2] === 0x75 && b[i + 3] === 0x65) {
      value = true;
      i += 4;
    } else if (c === 0x66 && b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65) {
      value = false;
      i += 5;
    } else if (c === 0x6e && b[i + 1] === 0x75 && b[i + 2] === 0x6c && b[i + 3] === 0x6c) {
      value = null;
      i += 4;
    } else return undefined;
    // JSON.parse keeps the last of repeated names, and so does assignment; `__proto__` must stay data.
    if (name === "__proto__") return undefined;
    out[name] = value;
    const sep = b[i];
    if (sep === CLOSE) return i === end - 1 ? out : undefined;
    if (sep !== COMMA) return undefined;
    i++;
  }
}

/** Where the number {@link readNumber} read last ended. */
let numberEnd = 0;

/**
 * Reads a JSON integer at `i` and sets `numberEnd` after it; `undefined` for anything else (no
 * digits, a leading zero, a fraction or an exponent: rare enough to leave to `JSON.parse`).
 */
function readNumber(b: Buffer, i: number, end: number): number | undefined {
  const numberStart = i;
  const negative = b[i] === MINUS;
  if (negative) i++;
  let n = 0;
  let digits = 0;
  for (; i < end; i++) {
    const d = b[i]!;
    if (d < ZERO || d > NINE) break;
    n = n * 10 + (d - ZERO);
    digits++;
  }
  if (digits === 0 || (digits > 1 && b[numberStart + (negative ? 1 : 0)] === ZERO)) return undefined;
  const next = b[i];
  if (next === 0x2e || next === 0x65 || next === 0x45) return undefined;
  numberEnd = i;
  return digits > MAX_FAST_DIGITS ? Number(latin1Text(b, numberStart, i)) : negative ? -n : n;
}

function nameOf(b: Buffer, start: number, end: number, hash: number): string {
  const key = (hash ^ (end - start)) | 0;
  const known = names.get(key);
  if (known !== undefined && known.length === end - start) {
    let same = true;
    for (let k = 0; k < known.length; k++) {
      if (known.charCodeAt(k) !== b[start + k]) {
        same = false;
        break;
      }
    }
    if (same) return known;
  }
  const name = latin1Text(b, start, end);
  if (names.size < MAX_NAMES) names.set(key, name);
  return name;
}
