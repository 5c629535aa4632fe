import type { PayloadCipher } from "../codec/cipher.js";
import { CodecError, ConfigError } from "../core/errors.js";
import type { Log } from "../storage/log.js";

/** A log that keeps engine settings in its data directory's manifest (the local engine does). */
interface ManifestStore {
  readonly manifest: { readonly extra: Readonly<Record<string, unknown>> };
  updateManifest(extra: Readonly<Record<string, unknown>>): Promise<void>;
}

interface CodecEntry {
  readonly algorithm: string;
  readonly keyIds: readonly string[];
}

function isManifestStore(log: Log): log is Log & ManifestStore {
  return "updateManifest" in log && "manifest" in log;
}

/**
 * Refuses an open that could only fail later: an encrypted directory opened without a cipher or
 * with none of its keys (a `CodecError` naming the key IDs), or a directory with plaintext runs
 * opened with a cipher (a `ConfigError`). It writes nothing; {@link recordCodec} does, once the
 * open is sure to go ahead.
 */
export function checkCodec(log: Log, cipher: PayloadCipher | undefined, where: string): void {
  if (!isManifestStore(log)) return;
  const recorded = log.manifest.extra.codec as CodecEntry | undefined;
  if (recorded === undefined) {
    if (cipher === undefined) return;
    const hasRuns = Array.from({ length: log.shardCount }, (_, shard) => log.streams(shard).length).some((n) => n > 0);
    if (hasRuns) {
      throw new ConfigError(
        `${where} holds runs written without encryption; open it without Config.codec(...), or start a new data directory for encrypted runs`,
      );
    }
  } else {
    if (cipher === undefined) {
      throw new CodecError(
        `${where} is encrypted (${recorded.algorithm}, key IDs ${quoted(recorded.keyIds)}); open it with Config.codec(...) holding those keys`,
      );
    }
    if (!recorded.keyIds.some((id) => cipher.keyIds.includes(id))) {
      throw new CodecError(
        `${where} was encrypted with key IDs ${quoted(recorded.keyIds)}, but the configured cipher has ${quoted(cipher.keyIds)}; ` +
          `keep the old keys after the new one to rotate`,
      );
    }
  }
}

/**
 * Keeps the data directory's record of how its payloads are encrypted in step with the configured
 * cipher (which {@link checkCodec} accepted): the algorithm, and every key ID ever configured.
 */
export async function recordCodec(log: Log, cipher: PayloadCipher | undefined): Promise<void> {
  if (!isManifestStore(log) || log.readOnly || cipher === undefined) return;
  const extra = log.manifest.extra;
  const recorded = extra.codec as CodecEntry | undefined;
  const keyIds = [...new Set([...cipher.keyIds, ...(recorded?.keyIds ?? [])])];
  if (recorded !== undefined && recorded.algorithm === cipher.algorithm && keyIds.length === recorded.keyIds.length) return;
  await log.updateManifest({ ...extra, codec: { ...recorded, algorithm: cipher.algorithm, keyIds } satisfies CodecEntry });
}

function quoted(ids: readonly string[]): string {
  return ids.map((id) => JSON.stringify(id)).join(", ");
}
