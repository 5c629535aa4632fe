import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { CodecError, StorageError } from "../core/errors.js";
import { checkExport, type ExportedJournal } from "./export-format.js";

/** The ending of export file names; `replayDir` reads the files that have it. */
export const EXPORT_FILE_SUFFIX = ".json";

// Longest name stem kept before a hash stands in for the rest: file systems allow 255 bytes.
const MAX_STEM = 160;
const SAFE = /[A-Za-z0-9_-]/;
// Names Windows reserves for devices, whatever their extension.
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/**
 * A file name for the export of a workflow ID, safe on every common file system for any ID: letters,
 * digits, `-` and `_` stay, every other character (also `.`, `/`, `%`, spaces and non-ASCII) is
 * written as `%xx` of its UTF-8 bytes, and a long ID is cut and ended with a hash of the whole ID, so
 * two IDs never share a name. Names differing only in letter case can still meet on case-insensitive
 * file systems, so IDs with capitals get the hash too, as do names Windows reserves (`con`, `nul`, ...).
 *
 * @example
 * exportFileName("pay-1");        // "pay-1.json"
 * exportFileName("orders/42");    // "orders%2f42.json"
 */
export function exportFileName(workflowId: string): string {
  let stem = "";
  for (const ch of workflowId) {
    stem += SAFE.test(ch) ? ch : [...Buffer.from(ch, "utf8")].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
  }
  const hashed = stem.length > MAX_STEM || /[A-Z]/.test(stem) || RESERVED.test(stem);
  if (stem === "" || hashed) {
    const hash = createHash("sha256").update(workflowId, "utf8").digest("hex").slice(0, 16);
    stem = `${stem.slice(0, MAX_STEM)}~${hash}`;
  }
  return `${stem}${EXPORT_FILE_SUFFIX}`;
}

/**
 * Writes an export to `file` (creating its folder), replacing it whole: the text goes to a temporary
 * file first, so a reader never sees half a file.
 *
 * @throws StorageError naming the file when it cannot be written.
 * @example
 * writeExport(join("test/journals", exportFileName(detail.id)), exportJournal(detail));
 */
export function writeExport(file: string, journal: ExportedJournal): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(temp, `${JSON.stringify(journal, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, file);
  } catch (e) {
    throw new StorageError(`could not write the export ${file}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Reads and checks an export file.
 *
 * @throws StorageError when the file cannot be read; CodecError naming the file and what is wrong
 * when it is not an export this version reads (not JSON, no format version, a newer format, a
 * malformed record).
 * @example
 * const journal = readExport("test/journals/pay-1.json");
 * console.log(journal.workflowId, journal.status, journal.records.length);
 */
export function readExport(file: string): ExportedJournal {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new StorageError(`could not read the export ${file}: ${(e as Error).message}`, { cause: e });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new CodecError(`${file} is not a valid fusee journal export: it is not JSON (${(e as Error).message})`, { cause: e });
  }
  return checkExport(data, file);
}
