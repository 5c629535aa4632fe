// What users import from replay; the rest of this folder is internal.
export { EXPORT_FORMAT, type ExportedJournal, type ExportedRecord } from "./export-format.js";
export type { ExportedValue, JsonValue } from "./exported-value.js";
export { exportJournal, importJournal, type ExportJournalOptions } from "./export-journal.js";
export { exportFileName, readExport, writeExport, EXPORT_FILE_SUFFIX } from "./export-file.js";
export { DataDirReader, DATA_DIR_STATUSES, type DataDirOptions, type DataDirPatch, type DataDirRun } from "./data-dir-reader.js";
export { exportFromDir, type ExportFromDirOptions } from "./export-from-dir.js";
export { Replayer, type ReplayResult, type ReplayerOptions } from "./replayer.js";
export type { ReplayWait } from "./code-waits.js";
