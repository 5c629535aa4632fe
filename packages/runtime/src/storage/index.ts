// What the engine and users import from storage; everything else in this folder is internal.
export type { FlushMethod, Log, LogEntry, LogStats } from "./log.js";
export { MemoryLog } from "./memory-log.js";
export { LocalLog, type LocalLogOptions, openLocalLog, prepareLocalLog } from "./local-log.js";
export type { Manifest } from "./manifest.js";
export type { RecoveryEvent } from "./recovery.js";
export type { RecoveryVisitor } from "./recovery-visitor.js";
export type { FileLayer, OpenMode } from "./file-layer.js";
