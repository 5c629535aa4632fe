import { Buffer } from "node:buffer";

/**
 * Text out of a Buffer range without `toString`'s argument handling, which costs about 60 ns a call
 * on the target machine: recovery decodes a stream key and a header's strings for every record.
 * Node's Buffer has carried `latin1Slice` and `utf8Slice` for as long as it has existed, without
 * documenting them; where they are missing, `toString` does the same work.
 */
interface SliceDecoders {
  latin1Slice?(start: number, end: number): string;
  utf8Slice?(start: number, end: number): string;
}

const proto = Buffer.prototype as unknown as SliceDecoders;

/** `buf[start, end)` read one byte per character: exact for ASCII. */
export const latin1Text: (buf: Buffer, start: number, end: number) => string =
  typeof proto.latin1Slice === "function"
    ? (buf, start, end) => (buf as unknown as Required<SliceDecoders>).latin1Slice(start, end)
    : (buf, start, end) => buf.toString("latin1", start, end);

/** `buf[start, end)` decoded as UTF-8. */
export const utf8Text: (buf: Buffer, start: number, end: number) => string =
  typeof proto.utf8Slice === "function"
    ? (buf, start, end) => (buf as unknown as Required<SliceDecoders>).utf8Slice(start, end)
    : (buf, start, end) => buf.toString("utf8", start, end);
