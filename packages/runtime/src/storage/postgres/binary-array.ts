/*
 * One-dimensional arrays in PostgreSQL's binary form (what `array_send` writes and `array_recv`
 * reads), for statement parameters. The driver sends a Buffer as a binary value, so an array built
 * here reaches the server without the text form: no quoting and escaping of every element in
 * JavaScript, no string garbage per element, and no parsing of the text on the server.
 *
 * The form: ndim, has-nulls flag, element type OID, then per dimension its length and lower
 * bound, then each element as its byte length and bytes (all integers 32-bit big-endian). An
 * empty array has no dimension.
 */
import { Buffer } from "node:buffer";

const TEXT_OID = 25;
const INT4_OID = 23;
/** ndim, flags, element type, length, lower bound. */
const HEADER_BYTES = 20;

/** An array built element by element into a buffer it reuses. */
abstract class ArrayWriter {
  protected buf = Buffer.allocUnsafe(1024);
  protected len = HEADER_BYTES;
  protected count = 0;

  constructor(private readonly oid: number) {}

  /** The array's bytes, valid until the next `push` or `clear`. */
  bytes(): Buffer {
    return finish(this.buf, this.len, this.count, this.oid);
  }

  clear(): void {
    this.len = HEADER_BYTES;
    this.count = 0;
  }

  /** Makes room for `bytes` more bytes. */
  protected room(bytes: number): void {
    if (this.len + bytes <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + bytes));
    this.buf.copy(bigger, 0, 0, this.len);
    this.buf = bigger;
  }
}

/** A `text[]`. */
export class TextArrayWriter extends ArrayWriter {
  constructor() {
    super(TEXT_OID);
  }

  push(value: string): void {
    this.room(4 + value.length * 3);
    const bytes = this.buf.write(value, this.len + 4, "utf8");
    this.buf.writeInt32BE(bytes, this.len);
    this.len += 4 + bytes;
    this.count++;
  }
}

/** An `integer[]`. */
export class Int4ArrayWriter extends ArrayWriter {
  constructor() {
    super(INT4_OID);
  }

  push(value: number): void {
    this.room(8);
    this.buf.writeInt32BE(4, this.len);
    this.buf.writeInt32BE(value, this.len + 4);
    this.len += 8;
    this.count++;
  }
}

function finish(buf: Buffer, len: number, count: number, oid: number): Buffer {
  if (count === 0) {
    // No dimension: ndim 0, no nulls, the element type, and nothing after.
    buf.writeInt32BE(0, 8);
    buf.writeInt32BE(0, 12);
    buf.writeInt32BE(oid, 16);
    return buf.subarray(8, 20);
  }
  buf.writeInt32BE(1, 0);
  buf.writeInt32BE(0, 4);
  buf.writeInt32BE(oid, 8);
  buf.writeInt32BE(count, 12);
  buf.writeInt32BE(1, 16);
  return buf.subarray(0, len);
}
