import type { PayloadCipher } from "../codec/cipher.js";
import { decodeError, decodeValue, encodeError, encodeValue } from "../codec/index.js";
import type { PayloadCodec, PayloadContext } from "../core/record-codec.js";
import { payloadTypes } from "../workflow/payload-types.js";

const encoder = new TextEncoder();

/** Binds a sealed payload to its place: a ciphertext copied to another record fails to open. */
function associatedData(c: PayloadContext): Uint8Array {
  return encoder.encode(`${c.workflowId}\u0000${c.runId}\u0000${c.position}`);
}

/** The engine's payload codec: type-preserving serialization, then encryption when configured. */
export function createPayloadCodec(cipher: PayloadCipher | undefined): PayloadCodec {
  if (cipher === undefined) {
    return {
      encodeValue: (value) => encodeValue(value, payloadTypes),
      decodeValue: (bytes) => decodeValue(bytes, payloadTypes),
      encodeError: (error) => encodeError(error, payloadTypes),
      decodeError: (bytes) => decodeError(bytes, payloadTypes),
    };
  }
  return {
    encodeValue: (value, c) => cipher.seal(encodeValue(value, payloadTypes), associatedData(c)),
    decodeValue: (bytes, c) => decodeValue(cipher.open(bytes, associatedData(c)), payloadTypes),
    encodeError: (error, c) => cipher.seal(encodeError(error, payloadTypes), associatedData(c)),
    decodeError: (bytes, c) => decodeError(cipher.open(bytes, associatedData(c)), payloadTypes),
  };
}
