/**
 * Encrypts payloads before they reach storage and decrypts them when read back. fusee ships
 * {@link aesGcm}; any authenticated cipher can be plugged in through `Config.codec(cipher)`.
 *
 * Implementations must be authenticated: `open` either returns exactly the bytes given to `seal` with
 * the same associated data, or throws a `CodecError`; it never returns garbage.
 *
 * @example
 * const cipher: PayloadCipher = aesGcm({ k2: newKey, k1: oldKey });
 * const sealed = cipher.seal(bytes, aad);
 * cipher.open(sealed, aad);            // bytes
 * cipher.keyIdOf(sealed);              // "k2"
 */
export interface PayloadCipher {
  /** The algorithm, for the data directory's manifest and for messages, for example `"aes-256-gcm"`. */
  readonly algorithm: string;
  /** Every key ID this cipher can open, the encrypting one first. */
  readonly keyIds: readonly string[];
  /** The key ID new payloads are sealed with. */
  readonly encryptingKeyId: string;
  /**
   * Encrypts `plain`, binding it to `aad` (associated data: authenticated, not stored), so a payload
   * copied to another place in the journal fails to open there.
   */
  seal(plain: Uint8Array, aad: Uint8Array): Uint8Array;
  /** Decrypts a sealed payload given the same associated data, or throws a `CodecError` naming the key ID. */
  open(sealed: Uint8Array, aad: Uint8Array): Uint8Array;
  /** The key ID a payload was sealed with, read without decrypting (to find payloads that still need an old key). */
  keyIdOf(sealed: Uint8Array): string;
  /** Payloads sealed with `keyId` by this cipher object since it was created; the engine persists the running total. */
  sealedCount(keyId: string): number;
}
