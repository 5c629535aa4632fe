import { Buffer } from "node:buffer";

/*
 * Binary values travel as base64 with the name of their view class, so a Float64Array comes back as
 * a Float64Array and a Buffer as a Buffer. Multi-byte views keep the platform's byte order, which is
 * little-endian on every platform Node ships prebuilt binaries for.
 */

type ViewClass = new (buffer: ArrayBuffer) => ArrayBufferView & { readonly byteLength: number };

const VIEW_CLASSES: ReadonlyMap<string, ViewClass & { readonly BYTES_PER_ELEMENT?: number }> = new Map<string, ViewClass>([
  ["Uint8Array", Uint8Array],
  ["Int8Array", Int8Array],
  ["Uint8ClampedArray", Uint8ClampedArray],
  ["Int16Array", Int16Array],
  ["Uint16Array", Uint16Array],
  ["Int32Array", Int32Array],
  ["Uint32Array", Uint32Array],
  ["Float32Array", Float32Array],
  ["Float64Array", Float64Array],
  ["BigInt64Array", BigInt64Array],
  ["BigUint64Array", BigUint64Array],
  ["DataView", DataView],
]);

/** The default kind, left out of the tag. */
export const DEFAULT_BYTES_KIND = "Uint8Array";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The kind name and base64 text of a binary value. */
export function bytesToText(value: ArrayBufferView | ArrayBuffer): { kind: string; text: string } {
  if (value instanceof ArrayBuffer) return { kind: "ArrayBuffer", text: Buffer.from(value).toString("base64") };
  const text = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64");
  if (Buffer.isBuffer(value)) return { kind: "Buffer", text };
  for (const [kind, cls] of VIEW_CLASSES) if (value instanceof cls) return { kind, text };
  return { kind: DEFAULT_BYTES_KIND, text };
}

/** Rebuilds a binary value; returns a reason string instead when the tag is malformed. */
export function textToBytes(kind: string, text: string): ArrayBufferView | ArrayBuffer | string {
  if (!BASE64.test(text) || text.length % 4 !== 0) return "holds bytes that are not valid base64";
  const raw = Buffer.from(text, "base64");
  if (kind === "Buffer") return raw;
  // A copy of exactly these bytes, so the result never shares Buffer's pool and is aligned for any view.
  const own = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length) as ArrayBuffer;
  if (kind === "ArrayBuffer") return own;
  const cls = VIEW_CLASSES.get(kind);
  if (cls === undefined) return `holds bytes of unknown kind ${JSON.stringify(kind)}`;
  const width = cls.BYTES_PER_ELEMENT ?? 1;
  if (own.byteLength % width !== 0) return `holds ${own.byteLength} bytes, not a whole number of ${kind} elements`;
  return new cls(own);
}
