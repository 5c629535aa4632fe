import { Buffer } from "node:buffer";
import { CodecError } from "../core/errors.js";
import { buildInstance } from "./class-bridge.js";
import { isPlainJson } from "./plain-json.js";
import type { SerializableClass, TypeRegistry } from "./type-registry.js";
import { isPlainRecord, ValueDecoder } from "./value-decoder.js";
import { ValueEncoder, type EncodeSettings } from "./value-encoder.js";
import { BODY_PLAIN, BODY_TAGGED, VALUE_FORMAT } from "./value-format.js";

/** Options of {@link encodeValue}. */
export interface EncodeOptions {
  /** The value's name in error messages (`"input"` gives `input.items[2].cb is a function`); `"value"` by default. */
  readonly label?: string;
  /**
   * A class whose instances are encoded even though it is not registered, such as a step's declared
   * result type; decode with the same class as hint.
   */
  readonly type?: SerializableClass;
}

/** Options of {@link decodeValue}; passing a class instead is short for `{ type: cls }`. */
export interface DecodeOptions {
  /** The value's name in error messages; `"value"` by default. */
  readonly label?: string;
  /**
   * The class the caller expects (`@Step({ type: Money })`): a plain object at the top (or each plain
   * object of a top-level array) becomes an instance through class-transformer, even when the payload
   * was written without a class tag, for example by a client that sent plain JSON.
   */
  readonly type?: SerializableClass;
}

/**
 * Serializes a value for the journal so that {@link decodeValue} gives back an equal value of the same
 * types: JSON values, `undefined` (also inside arrays and objects), `NaN`, `±Infinity`, `-0`, bigint,
 * `Date` (also invalid), `RegExp`, `Map`, `Set`, `Uint8Array`, `Buffer` and the other binary views,
 * errors, and instances of registered classes (class-transformer decorators apply), nested at will.
 *
 * Plain objects and arrays pass as they are, as do instances of unregistered classes that carry data
 * only (no methods or accessors): those come back as plain objects. As with JSON, symbol-keyed and
 * non-enumerable properties are not part of a value, and holes in sparse arrays come back as
 * `undefined`; subclasses of Map, Set, Date and the binary views come back as the built-in class.
 * Shared objects are written once per reference. Errors inside a value are encoded as by {@link encodeError}: fields of theirs that cannot
 * be encoded are described rather than refused. The layout is described in value-format.ts; plain
 * JSON values take a fast path that costs about one `JSON.stringify`.
 *
 * @throws CodecError naming the path of a function, a symbol, a cycle, or an instance of an
 * unregistered class with methods, for example `input.items[2].cb is a function`.
 * @example
 * const registry = new TypeRegistry().register(Money);
 * const bytes = encodeValue({ at: new Date(), total: new Money(5, "EUR") }, registry, { label: "input" });
 * const back = decodeValue<{ at: Date; total: Money }>(bytes, registry);
 * back.total instanceof Money; // true
 */
export function encodeValue(value: unknown, registry: TypeRegistry, options?: EncodeOptions): Uint8Array {
  return encodeWith(value, {
    registry,
    label: options?.label ?? "value",
    ...(options?.type !== undefined ? { type: options.type } : {}),
    lenient: false,
  });
}

/**
 * {@link encodeValue} for a caller that copies the bytes at once (into a journal record): they may
 * be a view into Node's shared buffer pool, which spares every step result an ArrayBuffer of its own.
 */
export function encodeValueTransient(value: unknown, registry: TypeRegistry): Uint8Array {
  return encodeWith(value, { registry, label: "value", lenient: false }, true);
}

/**
 * The JSON text of a value that {@link encodeValue} writes as plain JSON, or `undefined` when it
 * needs the tagged encoding. The payload is then the two bytes {@link PLAIN_VALUE_PREFIX} followed
 * by the text in UTF-8, which lets a record encoder write it straight into the record's buffer.
 */
export function plainJsonText(value: unknown): string | undefined {
  let plain = false;
  try {
    plain = isPlainJson(value);
  } catch {
    // A throwing getter or a very deep value: the tagged encoder reports it with its path.
  }
  return plain ? JSON.stringify(value) : undefined;
}

/** The first two bytes of a plain JSON value's payload: the value format and the plain body kind. */
export const PLAIN_VALUE_PREFIX: readonly number[] = [VALUE_FORMAT, BODY_PLAIN];

/** Encodes with explicit settings; the error codec uses it in lenient mode. */
export function encodeWith(value: unknown, settings: EncodeSettings, transient = false): Uint8Array {
  const text = plainJsonText(value);
  if (text !== undefined) return frame(BODY_PLAIN, text, transient);
  try {
    return frame(BODY_TAGGED, JSON.stringify(new ValueEncoder(settings).encode(value)), transient);
  } catch (e) {
    if (isStackOverflow(e)) throw new CodecError(`${settings.label} is nested too deeply to be journaled`);
    throw e;
  }
}

/**
 * Reads a value written by {@link encodeValue}, rebuilding registered classes from the registry.
 *
 * @throws CodecError when the payload is truncated, of an unknown format version, malformed, or
 * holds an instance of a class this registry does not know (the message names its path).
 * @example
 * const money = decodeValue<Money>(bytes, registry, Money);   // a hint: plain objects become Money
 */
export function decodeValue<T = unknown>(bytes: Uint8Array, registry: TypeRegistry, hint?: SerializableClass | DecodeOptions): T {
  const options: DecodeOptions = typeof hint === "function" ? { type: hint } : (hint ?? {});
  const label = options.label ?? "value";
  if (bytes.length < 2) throw new CodecError(`${label} payload is ${bytes.length} bytes, too short for a value (at least 2)`);
  if (bytes[0] !== VALUE_FORMAT) {
    throw new CodecError(
      `${label} payload has value format ${bytes[0]}; this version of fusee reads format ${VALUE_FORMAT}` +
        ` (was it written by a newer fusee, or is it still encrypted?)`,
    );
  }
  const body = bytes[1];
  if (body !== BODY_PLAIN && body !== BODY_TAGGED) throw new CodecError(`${label} payload has unknown body kind ${body}`);
  let tree: unknown;
  try {
    tree = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 2, bytes.length - 2).toString("utf8"));
  } catch (e) {
    throw new CodecError(`${label} payload is not valid JSON: ${(e as Error).message}`);
  }
  const type = options.type;
  let value: unknown;
  try {
    value = body === BODY_PLAIN ? tree : new ValueDecoder({ registry, label, ...(type !== undefined ? { type } : {}) }).decode(tree);
  } catch (e) {
    if (isStackOverflow(e)) throw new CodecError(`${label} is nested too deeply to be decoded`);
    throw e;
  }
  return (type === undefined ? value : applyHint(value, type, label)) as T;
}

function applyHint(value: unknown, type: SerializableClass, label: string): unknown {
  try {
    if (isPlainRecord(value)) return buildInstance(type, value);
    if (Array.isArray(value)) return value.map((item: unknown) => (isPlainRecord(item) ? buildInstance(type, item) : item));
    return value;
  } catch (e) {
    throw new CodecError(`${label} could not be rebuilt as class ${type.name}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function frame(body: number, json: string, transient: boolean): Uint8Array {
  const length = Buffer.byteLength(json, "utf8");
  if (transient) {
    const pooled = Buffer.allocUnsafe(length + 2);
    pooled[0] = VALUE_FORMAT;
    pooled[1] = body;
    pooled.write(json, 2, length, "utf8");
    return pooled;
  }
  // Bytes handed to a caller that keeps them own their memory, so they never expose a shared pool.
  const out = new Uint8Array(length + 2);
  out[0] = VALUE_FORMAT;
  out[1] = body;
  Buffer.from(out.buffer, 2, length).write(json, "utf8");
  return out;
}

function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && e.message.includes("call stack");
}
