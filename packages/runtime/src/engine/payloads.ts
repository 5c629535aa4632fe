import type { PayloadCipher } from "../codec/cipher.js";
import { sealedKeyId } from "../codec/aes-gcm.js";
import { decodeError, decodeValue, encodeError, encodeValue } from "../codec/index.js";
import { encodeValueTransient, PLAIN_VALUE_PREFIX, plainJsonText } from "../codec/value-codec.js";
import { CodecError } from "../core/errors.js";
import { payloadAssociatedData as associatedData, type PayloadCodec, type PayloadContext } from "../journal/record-codec.js";
import { payloadTypes } from "../workflow/payload-types.js";

/** The engine's payload codec: type-preserving serialization, then encryption when configured. */
export function createPayloadCodec(cipher: PayloadCipher | undefined): PayloadCodec {
  if (cipher === undefined) {
    return {
      // The record encoder copies the payload into the record at once.
      encodeValue: (value) => encodeValueTransient(value, payloadTypes),
      plainValueText: plainJsonText,
      plainValuePrefix: PLAIN_VALUE_PREFIX,
      decodeValue: (bytes, c) => unsealed(bytes, c, () => decodeValue(bytes, payloadTypes)),
      encodeError: (error) => encodeError(error, payloadTypes),
      decodeError: (bytes, c) => unsealed(bytes, c, () => decodeError(bytes, payloadTypes)),
    };
  }
  return {
    encodeValue: (value, c) => cipher.seal(encodeValue(value, payloadTypes), associatedData(c)),
    decodeValue: (bytes, c) => decodeValue(cipher.open(bytes, associatedData(c)), payloadTypes),
    encodeError: (error, c) => cipher.seal(encodeError(error, payloadTypes), associatedData(c)),
    decodeError: (bytes, c) => decodeError(cipher.open(bytes, associatedData(c)), payloadTypes),
  };
}

/** Decodes without a cipher; a payload that fails and looks sealed is reported with its key ID. */
function unsealed<T>(bytes: Uint8Array, c: PayloadContext, decode: () => T): T {
  try {
    return decode();
  } catch (e) {
    const keyId = e instanceof CodecError ? sealedKeyId(bytes) : undefined;
    if (keyId === undefined) throw e;
    throw new CodecError(
      `record ${c.position} of '${c.workflowId}' (run ${c.runId}) holds a payload sealed with key ${JSON.stringify(keyId)}, ` +
        `but no codec is configured: open the engine with Config.codec(aesGcm({ ${JSON.stringify(keyId)}: key }))`,
      { cause: e },
    );
  }
}
