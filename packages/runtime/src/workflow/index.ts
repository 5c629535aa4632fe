// What workflow code imports: decorators and their register twins, the run's context, retries and
// the errors workflow code throws and catches. None of it runs workflows or touches storage.
export * from "../core/errors.js";
export { toMillis, DurationError, type Duration, type DurationText, type DurationUnit, type DurationWord } from "../core/duration.js";
export { Workflow, Step, Signal, Query, Update } from "./decorators.js";
export { WORKFLOW_METADATA } from "./metadata-keys.js";
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
} from "./registry.js";
export { registerType } from "./payload-types.js";
export { registerConstructorTypes, registerWorkflowTypes, type WorkflowTypes, type HandlerTypes } from "./workflow-types.js";
export { Ctx, type PatchIds, type PatchId } from "./ctx.js";
export type { WaitOptions, ChildOptions, ContinueAsNewOptions, ChildHandle, Completion, AwaitCompletionOptions } from "./ctx-options.js";
export { RetryPolicy, type ErrorClass } from "./retry-policy.js";
export { WorkflowLog, type LogFields } from "./workflow-log.js";
export type { StepOptions, ClassType } from "./step-options.js";
