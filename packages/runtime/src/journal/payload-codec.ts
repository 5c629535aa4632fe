/** Identifies the record a payload belongs to; ciphers bind payloads to it. */
export interface PayloadContext {
  readonly workflowId: string;
  readonly runId: number;
  readonly position: number;
}

/** How user data inside records is turned into bytes and back. */
export interface PayloadCodec {
  encodeValue(value: unknown, context: PayloadContext): Uint8Array;
  /**
   * When the codec writes `value` as plain JSON, unsealed: its text, the payload being the bytes of
   * `plainValuePrefix` and that text in UTF-8, exactly what `encodeValue` returns; else `undefined`.
   * Lets the step record, written on every step, take its payload without a buffer of its own.
   * Codecs that seal payloads leave both out.
   */
  plainValueText?(value: unknown): string | undefined;
  readonly plainValuePrefix?: readonly number[];
  decodeValue(bytes: Uint8Array, context: PayloadContext): unknown;
  encodeError(error: unknown, context: PayloadContext): Uint8Array;
  decodeError(bytes: Uint8Array, context: PayloadContext): Error;
}

const encoder = new TextEncoder();

/**
 * The associated data a cipher binds a record's payload to (workflow ID, run and position), so a
 * sealed payload copied into another record fails to open there.
 */
export function payloadAssociatedData(context: PayloadContext): Uint8Array {
  return encoder.encode(`${context.workflowId}\u0000${context.runId}\u0000${context.position}`);
}
