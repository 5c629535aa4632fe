export * from "./core/errors.js";
export { toMillis, type Duration } from "./core/duration.js";
export type { Clock, ClockTimer, ClockUser } from "./core/clock.js";
export type { RunStatusValue, FinishedStatus } from "./core/status.js";
export type * from "./core/records.js";
export { Workflow, Step, Signal, Query, Update } from "./workflow/decorators.js";
export {
  registerWorkflow,
  registerStep,
  registerSignal,
  registerQuery,
  registerUpdate,
  type WorkflowClass,
  type WorkflowOptions,
  type UpdateHandlerOptions,
  type HandlerOptions,
} from "./workflow/registry.js";
export { registerType } from "./workflow/payload-types.js";
export { registerWorkflowTypes, type WorkflowTypes, type HandlerTypes } from "./workflow/workflow-types.js";
export { Ctx, type PatchIds, type PatchId, type WaitOptions, type ChildOptions, type ChildHandle, type Completion } from "./workflow/ctx.js";
export { RetryPolicy, type ErrorClass } from "./workflow/retry-policy.js";
export type { StepOptions, ClassType } from "./workflow/step-options.js";
export { Config } from "./engine/config.js";
export { Engine, type EngineDescription, type EngineOptions, type IdleOptions } from "./engine/engine.js";
export type { EngineEvent, FormatMigratedEvent, RecoveryCutEvent } from "./engine/engine-events.js";
export { repairDataDir } from "./engine/repair-data-dir.js";
export type { LimitSpec } from "./engine/limits.js";
export { Debounce, Batch, type EventOptions } from "./engine/flow-rules.js";
export { Schedule } from "./engine/schedule-handle.js";
export type { ScheduleSpec, Overlap, CatchUp } from "./engine/schedule-spec.js";
export type { ScheduleDescription } from "./engine/schedule-runtime.js";
export { RunHandle } from "./client/run-handle.js";
export type * from "./client/types.js";
export type { FlushMethod } from "./storage/log.js";
export { aesGcm, type PayloadCipher } from "./codec/index.js";
export * from "./replay/index.js";
