import type { PayloadCipher } from "../codec/cipher.js";
import { RANDOM_NONCE_LIMIT } from "../codec/aes-gcm.js";
import { CodecError } from "../core/errors.js";
import type { Log } from "../storage/log.js";

/** Seals reserved in the manifest ahead of use; a crash over-counts a key by at most this many. */
export const SEAL_RESERVATION = 65_536;

/** The `process.emitWarning` code of the warning that a key has sealed half its limit. */
export const SEAL_WARNING_CODE = "FUSEE_KEY_NEAR_SEAL_LIMIT";

interface ManifestStore {
  readonly manifest: { readonly extra: Readonly<Record<string, unknown>> };
  updateManifest(extra: Readonly<Record<string, unknown>>): Promise<void>;
}

function isManifestStore(log: Log): log is Log & ManifestStore {
  return "updateManifest" in log && "manifest" in log;
}

/**
 * A cipher that counts the payloads each key has sealed over the life of the data directory and
 * refuses to seal past {@link RANDOM_NONCE_LIMIT} with one key.
 *
 * The counts live in the manifest as `extra.codec.sealed` (key ID → count). The figure written is
 * always ahead of the seals done: on open it reserves {@link SEAL_RESERVATION} seals, and halfway
 * through a reservation it writes the next one, so a crash can only over-count. A clean shutdown
 * writes the exact count. Without a manifest (memory and PostgreSQL storage) the count covers this
 * process only.
 */
export class SealBudget implements PayloadCipher {
  readonly algorithm: string;
  readonly keyIds: readonly string[];
  readonly encryptingKeyId: string;
  /** Seals per key ID, counted since the data directory was created. */
  readonly #counts = new Map<string, number>();
  #store: ManifestStore | undefined;
  /** The encrypting key's count the manifest durably holds (or will once `#pending` settles). */
  #persisted = Infinity;
  /** The figure durably written; sealing never passes it. */
  #durable = Infinity;
  #pending: Promise<void> | undefined;
  #warned = false;
  #failure: unknown;

  /** The most payloads one key may seal. */
  readonly limit: number;
  readonly #reservation: number;

  constructor(
    private readonly inner: PayloadCipher,
    options: { readonly limit?: number; readonly reservation?: number } = {},
  ) {
    this.limit = options.limit ?? RANDOM_NONCE_LIMIT;
    this.#reservation = options.reservation ?? SEAL_RESERVATION;
    this.algorithm = inner.algorithm;
    this.keyIds = inner.keyIds;
    this.encryptingKeyId = inner.encryptingKeyId;
    for (const id of inner.keyIds) this.#counts.set(id, 0);
  }

  /** Reads the counts from the log's manifest, if it keeps one, and reserves the first seals there. */
  async load(log: Log): Promise<void> {
    if (!isManifestStore(log)) return;
    const codec = log.manifest.extra.codec as { sealed?: Record<string, unknown> } | undefined;
    for (const [id, value] of Object.entries(codec?.sealed ?? {})) {
      if (typeof value === "number" && Number.isFinite(value) && value >= 0)
        this.#counts.set(id, Math.max(this.#counts.get(id) ?? 0, value));
    }
    this.warnIfNear();
    if (log.readOnly) return;
    this.#store = log;
    this.#persisted = 0;
    this.#durable = 0;
    await this.reserve();
  }

  /** Writes the exact counts, releasing what was reserved; called before the log closes. */
  async settle(): Promise<void> {
    if (this.#store === undefined) return;
    await this.#pending?.catch(() => undefined);
    const count = this.count(this.encryptingKeyId);
    this.#durable = Math.min(this.#durable, count);
    // Should this write fail, the manifest keeps the reserved figure, which is above the true count: safe.
    await this.write(count).catch(() => undefined);
  }

  /** Payloads sealed with `keyId` since the data directory was created, as far as this engine knows. */
  count(keyId: string): number {
    return this.#counts.get(keyId) ?? 0;
  }

  /** Every key's count, including keys no longer configured. */
  counts(): Record<string, number> {
    return Object.fromEntries(this.#counts);
  }

  seal(plain: Uint8Array, aad: Uint8Array): Uint8Array {
    const id = this.encryptingKeyId;
    const next = this.count(id) + 1;
    if (next > this.limit) {
      throw new CodecError(
        `key ${JSON.stringify(id)} has sealed ${this.count(id)} payloads, the most one key may seal with random nonces (${this.limit}); ` +
          `rotate to a new key first: put it before ${JSON.stringify(id)} in the cipher's keys`,
      );
    }
    if (next > this.#durable) {
      throw new CodecError(
        `key ${JSON.stringify(id)} cannot seal until its count is saved in the data directory's manifest` +
          (this.#failure === undefined ? "" : `: ${(this.#failure as Error)?.message ?? String(this.#failure)}`),
      );
    }
    const sealed = this.inner.seal(plain, aad);
    this.#counts.set(id, next);
    // A reservation that fails is kept in #failure; the seal that needs it reports it.
    if (this.#store !== undefined && this.#pending === undefined && next >= this.#persisted - this.#reservation / 2)
      this.reserve().catch(() => undefined);
    this.warnIfNear();
    return sealed;
  }

  open(sealed: Uint8Array, aad: Uint8Array): Uint8Array {
    return this.inner.open(sealed, aad);
  }

  keyIdOf(sealed: Uint8Array): string {
    return this.inner.keyIdOf(sealed);
  }

  sealedCount(keyId: string): number {
    return this.inner.sealedCount(keyId);
  }

  private reserve(): Promise<void> {
    const target = Math.min(this.count(this.encryptingKeyId) + this.#reservation, this.limit);
    if (target <= this.#persisted) return Promise.resolve();
    const run = this.write(target)
      .catch((e: unknown) => {
        this.#failure = e;
        throw e;
      })
      .finally(() => {
        this.#pending = undefined;
      });
    this.#pending = run;
    // Kept in #failure above for the seal that needs it; `settle` may wait on it without caring how it ended.
    run.catch(() => undefined);
    return run;
  }

  /** Writes the counts with the encrypting key at `figure`; sealing may go up to it once written. */
  private async write(figure: number): Promise<void> {
    const store = this.#store as ManifestStore;
    const extra = store.manifest.extra;
    const codec = (extra.codec ?? {}) as Record<string, unknown>;
    const sealed = { ...this.counts(), [this.encryptingKeyId]: figure };
    await store.updateManifest({ ...extra, codec: { ...codec, sealed } });
    this.#persisted = figure;
    this.#durable = figure;
    this.#failure = undefined;
  }

  private warnIfNear(): void {
    const id = this.encryptingKeyId;
    if (this.#warned || this.count(id) < this.limit / 2) return;
    this.#warned = true;
    process.emitWarning(
      `key ${JSON.stringify(id)} has sealed ${this.count(id)} payloads, over half the ${this.limit} one key may seal; rotate to a new key soon`,
      { code: SEAL_WARNING_CODE },
    );
  }
}
