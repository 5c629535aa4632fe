import type { RecoveryCutEvent } from "../storage/recovery-cuts.js";
import type { ExportedJournal } from "./export-format.js";
import { DataDirReader, type DataDirOptions } from "./data-dir-reader.js";

/** Options of {@link exportFromDir}. */
export interface ExportFromDirOptions extends DataDirOptions {
  /** Export only the latest run of this workflow ID. */
  readonly id?: string;
  /** At most this many runs, most recently started first; 100 by default. */
  readonly limit?: number;
  /** Told of each write torn by a crash that was left out (see `DataDirReader.recoveryEvents`). */
  readonly onEvent?: (event: RecoveryCutEvent) => void;
}

/**
 * Exports journals straight from a data directory, also while an engine runs on it: the directory
 * is read without its lock and without writing anything, and only complete records are read. Pass
 * the engine's cipher when payloads are encrypted.
 *
 * @returns the export of the ID's run (or nothing when it has none), or of up to `limit` runs,
 * most recently started first.
 * @throws StorageError when `dir` is not a data directory or is damaged; CodecError when a payload
 * is encrypted and the cipher lacks its key.
 * @example
 * for (const journal of await exportFromDir("./data", { limit: 50 })) {
 *   writeExport(join("journals", exportFileName(journal.workflowId)), journal);
 * }
 */
export async function exportFromDir(dir: string, options: ExportFromDirOptions = {}): Promise<ExportedJournal[]> {
  const reader = await DataDirReader.open(dir, options);
  try {
    for (const cut of reader.recoveryEvents()) options.onEvent?.(cut);
    const limit = options.limit ?? 100;
    const ids = options.id !== undefined ? [options.id] : reader.list({}, limit).map((r) => r.id);
    const out: ExportedJournal[] = [];
    for (const id of ids.slice(0, Math.max(0, limit))) {
      const journal = await reader.export(id);
      if (journal !== undefined) out.push(journal);
    }
    return out;
  } finally {
    await reader.close();
  }
}
