import { Buffer } from "node:buffer";
import { sealedKeyId } from "../codec/aes-gcm.js";
import { decodeError, decodeValue, encodeError, encodeValue } from "../codec/index.js";
import type { TypeRegistry } from "../codec/type-registry.js";
import { BODY_PLAIN, BODY_TAGGED, VALUE_FORMAT } from "../codec/value-format.js";
import { CodecError } from "../core/errors.js";

/** A JSON value as it appears in an export file. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A payload in an export file: the body of the codec's value encoding (value-format.ts), kept as
 * JSON so the file stays readable. `plain` holds JSON read back as it is; `tagged` holds the codec's
 * tagged JSON, where objects with a `"$"` key stand for dates, maps, class instances, errors and the
 * like. Either reads back as the same value of the same types.
 */
export type ExportedValue = { readonly plain: JsonValue } | { readonly tagged: JsonValue };

/** Turns a value payload (format 1, unencrypted) into its export form. */
export function exportedValueOfBytes(bytes: Uint8Array, label: string): ExportedValue {
  const unreadable = (why: string): never => {
    const keyId = sealedKeyId(bytes);
    throw new CodecError(
      keyId === undefined
        ? `${label} ${why}; if the data is encrypted, pass its cipher`
        : `${label} ${why}: it looks sealed with key ${JSON.stringify(keyId)}; pass a cipher holding that key`,
    );
  };
  if (bytes.length < 2 || bytes[0] !== VALUE_FORMAT || (bytes[1] !== BODY_PLAIN && bytes[1] !== BODY_TAGGED)) {
    return unreadable(`is not a value payload of format ${VALUE_FORMAT}`);
  }
  let tree: JsonValue;
  try {
    tree = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 2, bytes.length - 2).toString("utf8")) as JsonValue;
  } catch (e) {
    return unreadable(`is not valid JSON (${(e as Error).message})`);
  }
  return bytes[1] === BODY_PLAIN ? { plain: tree } : { tagged: tree };
}

/** The value payload bytes an export form stands for. */
export function bytesOfExportedValue(value: ExportedValue): Uint8Array {
  const plain = "plain" in value;
  const json = Buffer.from(JSON.stringify(plain ? value.plain : value.tagged), "utf8");
  const out = new Uint8Array(json.length + 2);
  out[0] = VALUE_FORMAT;
  out[1] = plain ? BODY_PLAIN : BODY_TAGGED;
  out.set(json, 2);
  return out;
}

/** Encodes a live value (from a run's journal) into its export form. */
export function exportValue(value: unknown, registry: TypeRegistry, label: string): ExportedValue {
  return exportedValueOfBytes(encodeValue(value, registry, { label }), label);
}

/** Encodes an error (from a run's journal) into its export form. */
export function exportError(error: unknown, registry: TypeRegistry, label: string): ExportedValue {
  return exportedValueOfBytes(encodeError(error, registry, { label }), label);
}

/** Reads a value back from its export form, rebuilding registered classes. */
export function importValue(value: ExportedValue, registry: TypeRegistry, label: string): unknown {
  return decodeValue(bytesOfExportedValue(value), registry, { label });
}

/** Reads an error back from its export form. */
export function importError(value: ExportedValue, registry: TypeRegistry, label: string): Error {
  return decodeError(bytesOfExportedValue(value), registry, { label });
}

/**
 * Splits the export form of an array into the export forms of its items: a subtree of a plain or
 * tagged body is itself a plain or tagged body.
 */
export function exportedItems(value: ExportedValue, label: string): ExportedValue[] {
  const tree = "plain" in value ? value.plain : value.tagged;
  if (!Array.isArray(tree)) throw new CodecError(`${label} should hold an array`);
  return tree.map((item) => ("plain" in value ? { plain: item } : { tagged: item }));
}
