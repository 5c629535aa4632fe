import { Buffer } from "node:buffer";
import { sealedKeyId } from "../codec/aes-gcm.js";
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
