import { createCipheriv, createDecipheriv, createSecretKey, randomFillSync, type KeyObject } from "node:crypto";
import { CodecError } from "../core/errors.js";
import type { PayloadCipher } from "./cipher.js";

/**
 * The layout of a payload sealed by {@link aesGcm}:
 *
 * ```text
 * byte 0        sealed format version (1)
 * byte 1        key ID length L (1..255)
 * bytes 2..     key ID, UTF-8 (L bytes)
 * next 12       nonce, random per payload
 * next n        ciphertext (as long as the plaintext)
 * last 16       GCM authentication tag
 * ```
 *
 * The header (version and key ID) is authenticated along with the caller's associated data, so it
 * cannot be altered without the payload failing to open.
 */
export const SEALED_FORMAT = 1;

const ALGORITHM = "aes-256-gcm";
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const MAX_KEY_ID_BYTES = 255;

/**
 * The number of payloads one key may seal with random nonces before the chance of a nonce repeating,
 * which would break GCM, stops being negligible (NIST SP 800-38D). Rotate keys well before it.
 */
export const RANDOM_NONCE_LIMIT = 2 ** 32;

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

interface Key {
  readonly secret: KeyObject;
  readonly header: Uint8Array;
}

/**
 * AES-256-GCM payload encryption with key rotation: the first key seals, every key opens. To rotate,
 * put the new key first and keep the old ones for as long as journals sealed with them exist;
 * `keyIdOf` tells which key a payload needs.
 *
 * Key IDs are names of your choice (1 to 255 UTF-8 bytes) stored with every payload; they must not be
 * all digits, because JavaScript orders such object keys numerically and "the first key" would not be
 * the one you wrote first.
 *
 * @throws CodecError when there is no key, a key is not 32 bytes, or a key ID is unusable (the message
 * names the key ID).
 * @example
 * import { randomBytes } from "node:crypto";
 * const cipher = aesGcm({ k2: newKey, k1: oldKey });   // seals with k2, opens k2 and k1 payloads
 * const engine = await Engine.open(Config.local("./data").codec(cipher), { workflows: [Pay] });
 */
export function aesGcm(keys: Readonly<Record<string, Uint8Array>>): PayloadCipher {
  return new AesGcmCipher(keys);
}

class AesGcmCipher implements PayloadCipher {
  readonly algorithm = ALGORITHM;
  readonly keyIds: readonly string[];
  readonly encryptingKeyId: string;
  readonly #keys = new Map<string, Key>();
  readonly #sealed = new Map<string, number>();

  constructor(keys: Readonly<Record<string, Uint8Array>>) {
    if (typeof keys !== "object" || keys === null) throw new CodecError("aesGcm needs an object of keys, for example aesGcm({ k1: key })");
    const ids = Object.keys(keys);
    const first = ids[0];
    if (first === undefined) throw new CodecError("aesGcm needs at least one key, for example aesGcm({ k1: randomBytes(32) })");
    for (const id of ids) this.#keys.set(id, makeKey(id, keys[id]));
    for (const id of ids) this.#sealed.set(id, 0);
    this.keyIds = Object.freeze(ids);
    this.encryptingKeyId = first;
  }

  seal(plain: Uint8Array, aad: Uint8Array): Uint8Array {
    checkBytes(plain, "seal: the plaintext");
    checkBytes(aad, "seal: the associated data");
    const id = this.encryptingKeyId;
    const key = this.#keys.get(id) as Key;
    const headerLength = key.header.length;
    const out = new Uint8Array(headerLength + NONCE_BYTES + plain.length + TAG_BYTES);
    out.set(key.header, 0);
    const nonce = out.subarray(headerLength, headerLength + NONCE_BYTES);
    nextNonce(nonce);
    const cipher = createCipheriv(ALGORITHM, key.secret, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(concat(key.header, aad));
    const body = cipher.update(plain);
    out.set(body, headerLength + NONCE_BYTES);
    out.set(cipher.final(), headerLength + NONCE_BYTES + body.length);
    out.set(cipher.getAuthTag(), out.length - TAG_BYTES);
    this.#sealed.set(id, (this.#sealed.get(id) ?? 0) + 1);
    return out;
  }

  open(sealed: Uint8Array, aad: Uint8Array): Uint8Array {
    checkBytes(sealed, "open: the sealed payload");
    checkBytes(aad, "open: the associated data");
    const { keyId, headerLength } = readHeader(sealed);
    const key = this.#keys.get(keyId);
    if (key === undefined) {
      throw new CodecError(
        `payload was sealed with key ${JSON.stringify(keyId)}, which is not configured ` +
          `(configured: ${this.keyIds.map((k) => JSON.stringify(k)).join(", ")}); add that key to aesGcm({...})`,
      );
    }
    const minimum = headerLength + NONCE_BYTES + TAG_BYTES;
    if (sealed.length < minimum) {
      throw new CodecError(
        `payload sealed with key ${JSON.stringify(keyId)} is truncated: ${sealed.length} bytes, at least ${minimum} expected`,
      );
    }
    const nonce = sealed.subarray(headerLength, headerLength + NONCE_BYTES);
    const tag = sealed.subarray(sealed.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv(ALGORITHM, key.secret, nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(concat(sealed.subarray(0, headerLength), aad));
      decipher.setAuthTag(tag);
      const body = decipher.update(sealed.subarray(headerLength + NONCE_BYTES, sealed.length - TAG_BYTES));
      const rest = decipher.final();
      return rest.length === 0 ? body : concat(body, rest);
    } catch {
      // Authentication failures say nothing more precise by design; never pass on unauthenticated bytes.
      throw new CodecError(
        `cannot open payload sealed with key ${JSON.stringify(keyId)}: the key is wrong, ` +
          `the associated data differs (a payload moved to another record?), or the payload was altered or truncated`,
      );
    }
  }

  keyIdOf(sealed: Uint8Array): string {
    checkBytes(sealed, "keyIdOf: the sealed payload");
    return readHeader(sealed).keyId;
  }

  sealedCount(keyId: string): number {
    const count = this.#sealed.get(keyId);
    if (count === undefined) throw new CodecError(`sealedCount: key ${JSON.stringify(keyId)} is not configured`);
    return count;
  }
}

/**
 * The key ID named by bytes in the layout of {@link SEALED_FORMAT}, or `undefined` when they cannot
 * be such a payload; reads no key and proves nothing. For messages about a payload that failed to
 * decode without a cipher: it was most likely sealed with this key.
 */
export function sealedKeyId(bytes: Uint8Array): string | undefined {
  try {
    const { keyId, headerLength } = readHeader(bytes);
    // A key ID never holds control characters; random bytes read as a header usually do.
    // eslint-disable-next-line no-control-regex
    return bytes.length >= headerLength + NONCE_BYTES + TAG_BYTES && !/[\u0000-\u001f]/.test(keyId) ? keyId : undefined;
  } catch {
    return undefined;
  }
}

function makeKey(id: string, key: Uint8Array | undefined): Key {
  if (/^\d+$/.test(id)) {
    throw new CodecError(
      `key ID ${JSON.stringify(id)} is all digits; JavaScript orders such keys numerically, so the first key ` +
        `would not be the one written first: use a name such as "k${id}"`,
    );
  }
  const idBytes = utf8.encode(id);
  if (idBytes.length === 0 || idBytes.length > MAX_KEY_ID_BYTES) {
    throw new CodecError(`key ID ${JSON.stringify(id)} must be 1 to ${MAX_KEY_ID_BYTES} bytes of UTF-8; it is ${idBytes.length}`);
  }
  if (!(key instanceof Uint8Array)) {
    throw new CodecError(`key ${JSON.stringify(id)} must be a Uint8Array or Buffer of ${KEY_BYTES} bytes; got ${typeof key}`);
  }
  if (key.length !== KEY_BYTES) {
    throw new CodecError(
      `key ${JSON.stringify(id)} is ${key.length} bytes; AES-256-GCM needs exactly ${KEY_BYTES} (for example randomBytes(32))`,
    );
  }
  const header = new Uint8Array(2 + idBytes.length);
  header[0] = SEALED_FORMAT;
  header[1] = idBytes.length;
  header.set(idBytes, 2);
  // createSecretKey copies the bytes, so later changes to the caller's array cannot alter the key.
  return { secret: createSecretKey(key), header };
}

function readHeader(sealed: Uint8Array): { keyId: string; headerLength: number } {
  if (sealed.length < 2) throw new CodecError(`sealed payload is ${sealed.length} bytes, too short to name its key`);
  if (sealed[0] !== SEALED_FORMAT) {
    throw new CodecError(
      `sealed payload has format ${sealed[0]}; this version of fusee reads format ${SEALED_FORMAT} (is the payload encrypted at all?)`,
    );
  }
  const idLength = sealed[1] as number;
  const headerLength = 2 + idLength;
  if (idLength === 0 || sealed.length < headerLength) {
    throw new CodecError(`sealed payload is ${sealed.length} bytes, too short for its ${idLength}-byte key ID (truncated?)`);
  }
  let keyId: string;
  try {
    keyId = strictUtf8.decode(sealed.subarray(2, headerLength));
  } catch {
    throw new CodecError("sealed payload names a key ID that is not valid UTF-8 (corrupt payload)");
  }
  return { keyId, headerLength };
}

function checkBytes(value: unknown, what: string): void {
  if (!(value instanceof Uint8Array)) throw new CodecError(`${what} must be a Uint8Array; got ${typeof value}`);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

// One getrandom call per 256 nonces instead of one per payload: the bytes are as random, and the
// system call was a third of the cost of sealing a small payload.
const NONCE_POOL = new Uint8Array(NONCE_BYTES * 256);
let noncePoolUsed = NONCE_POOL.length;

/** Fills `into` with the next 12 unused random bytes of the pool; no byte is ever handed out twice. */
function nextNonce(into: Uint8Array): void {
  if (noncePoolUsed + NONCE_BYTES > NONCE_POOL.length) {
    randomFillSync(NONCE_POOL);
    noncePoolUsed = 0;
  }
  into.set(NONCE_POOL.subarray(noncePoolUsed, noncePoolUsed + NONCE_BYTES));
  noncePoolUsed += NONCE_BYTES;
}
