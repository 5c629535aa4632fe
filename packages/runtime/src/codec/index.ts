export { TypeRegistry, type SerializableClass } from "./type-registry.js";
export { encodeValue, decodeValue, type EncodeOptions, type DecodeOptions } from "./value-codec.js";
export { encodeError, decodeError } from "./error-codec.js";
export type { WrappedThrow } from "./error-shape.js";
export { VALUE_FORMAT } from "./value-format.js";
export type { PayloadCipher } from "./cipher.js";
export { aesGcm, SEALED_FORMAT, RANDOM_NONCE_LIMIT } from "./aes-gcm.js";
