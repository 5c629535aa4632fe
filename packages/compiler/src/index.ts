/**
 * The analysis and code generation behind `fusee gen`: typed clients, the worker type table and the workflow lock.
 *
 * @module @fusee/compiler
 */
export { generate, runGeneration, type GenerateResult, type GeneratedFile, type WorkflowSummary } from "./generate.js";
export { watch, type Watcher, type WatchEvents, type WatchOptions } from "./watch.js";
export { resolveConfig, CONFIG_FILE, DEFAULT_LOCK, DEFAULT_OUT, type GenerateOptions, type ResolvedConfig } from "./config.js";
export {
  GenError,
  GenConfigError,
  LockFileError,
  SourceError,
  BreakingChangeError,
  formatLocation,
  type BreakingChange,
  type SourceProblem,
  type SourceProblemCode,
} from "./errors.js";
export { GENERATED_HEADER } from "./emit-client.js";
export { LOCK_VERSION, type Lock, type LockNode, type LockSignature, type LockType, type LockWorkflow } from "./lock.js";
export type * from "./ir.js";
