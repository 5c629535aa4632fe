// What code that calls workflows imports: run handles and the shapes they return. Generated
// clients build on these; the engine that hands them out is in the package's root.
export * from "../core/errors.js";
export { RUN_STATUSES, type RunStatusValue, type FinishedStatus } from "../core/status.js";
export type * from "../journal/records.js";
export { RunHandle } from "./run-handle.js";
export { UpdateHandle } from "./update-handle.js";
export type { RunOperations } from "./run-operations.js";
export type * from "./types.js";
