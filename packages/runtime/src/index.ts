/**
 * Decorators, the engine and its configuration, storage engines, run handles, the codec, export and replay.
 *
 * @module @fusee/runtime
 */
// Everything fusee offers from one entry point; the subpaths (`/workflow`, `/client`, `/replay`,
// `/testing`) offer each role its part.
export type { Clock, ClockTimer, ClockUser } from "./core/clock.js";
export * from "./workflow/index.js";
export { Config } from "./engine/config.js";
export { Engine, type EngineDescription, type EngineOptions, type IdleOptions } from "./engine/engine.js";
export type {
  EngineEvent,
  FormatMigratedEvent,
  LeaseLateEvent,
  LeaseLostEvent,
  RecoveryCutEvent,
  RunStoppedEvent,
  ShardFatalEvent,
} from "./engine/engine-events.js";
export type { EngineEventListener } from "./engine/event-bus.js";
export type { Logger, LogLevel } from "./core/logger.js";
export { repairDataDir } from "./engine/repair-data-dir.js";
export type { LimitSpec } from "./engine/limits.js";
export { Debounce, Batch, type EventOptions } from "./engine/flow-rules.js";
export { Schedule } from "./engine/schedule-handle.js";
export type { ScheduleSpec, Overlap, CatchUp } from "./engine/schedule-spec.js";
export type { ScheduleDescription } from "./engine/schedule-runtime.js";
export * from "./client/index.js";
export type { FlushMethod } from "./storage/log.js";
export { aesGcm, type PayloadCipher } from "./codec/index.js";
export * from "./replay/index.js";
