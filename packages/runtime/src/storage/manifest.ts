import path from "node:path";
import { ConfigError, StorageError } from "../core/errors.js";
import { type FileLayer, readFully, writeFully } from "./file-layer.js";
import { FILE_MODE } from "./segment.js";

/**
 * The on-disk format this code writes and the newest it reads. Format 2 opens every write of a
 * segment with a batch header; a directory of format 1 is read as it was written and moved to
 * format 2 by its first writable open.
 */
export const FORMAT_VERSION = 2;

const MANIFEST_NAME = "manifest.json";

/** What a data directory says about itself. */
export interface Manifest {
  /** On-disk format version. */
  readonly format: number;
  /** Number of shards, fixed when the directory is created. */
  readonly shards: number;
  /** When the directory was created (ISO 8601). */
  readonly created: string;
  /** Engine-owned settings (codec key IDs and the like), replaced whole by `updateManifest`. */
  readonly extra: Readonly<Record<string, unknown>>;
}

/** Reads the manifest, or undefined when the directory has none yet. */
export function readManifest(layer: FileLayer, dir: string): Manifest | undefined {
  const file = path.join(dir, MANIFEST_NAME);
  if (!layer.exists(file)) return undefined;
  const fd = layer.open(file, "read", FILE_MODE);
  let text: string;
  try {
    const buf = Buffer.alloc(layer.size(fd));
    text = buf.toString("utf8", 0, readFully(layer, fd, buf, 0, buf.length, 0));
  } finally {
    layer.close(fd);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new StorageError(`the manifest ${file} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const m = data as Partial<Manifest> | null;
  if (m === null || typeof m !== "object" || typeof m.format !== "number") {
    throw new StorageError(`the manifest ${file} has no format version`);
  }
  if (m.format > FORMAT_VERSION) {
    throw new ConfigError(
      `the data directory ${dir} has format ${m.format}, newer than this version of fusee reads ` +
        `(${FORMAT_VERSION}); upgrade fusee to open it`,
    );
  }
  if (!Number.isInteger(m.shards) || (m.shards as number) < 1 || typeof m.created !== "string") {
    throw new StorageError(`the manifest ${file} lacks a valid shard count or creation time`);
  }
  const extra = m.extra !== null && typeof m.extra === "object" && !Array.isArray(m.extra) ? m.extra : {};
  return { format: m.format, shards: m.shards as number, created: m.created, extra };
}

/**
 * Replaces the manifest durably: the new text goes to a temporary file that is synced, renamed
 * over the old one, and the directory is synced, so a crash leaves the old or the new manifest whole.
 * A failed step is a `StorageError` naming the file and the step; the old manifest is then intact.
 */
export function writeManifest(layer: FileLayer, dir: string, manifest: Manifest): void {
  const file = path.join(dir, MANIFEST_NAME);
  const temp = `${file}.tmp`;
  const text = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
  step(temp, "removing a leftover", () => {
    if (layer.exists(temp)) layer.unlink(temp);
  });
  const fd = step(temp, "creating", () => layer.open(temp, "create", FILE_MODE));
  try {
    step(temp, "writing", () => writeFully(layer, fd, text, 0, text.length, 0));
    step(temp, "syncing", () => layer.sync(fd, false));
  } finally {
    layer.close(fd);
  }
  step(file, `renaming ${temp} to`, () => layer.rename(temp, file));
  step(dir, "syncing the directory", () => layer.syncDir(dir), "the new manifest is in place but may not survive a power loss");
}

function step<T>(file: string, what: string, run: () => T, state = "the previous manifest, if any, is unchanged"): T {
  try {
    return run();
  } catch (err) {
    throw new StorageError(`could not write the manifest: ${what} ${file} failed (${(err as Error).message}); ${state}`, {
      cause: err,
    });
  }
}
