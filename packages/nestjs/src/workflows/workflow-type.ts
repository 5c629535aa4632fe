import { WORKFLOW_METADATA, type WorkflowClass } from "@fusee/runtime";

/** The workflow type name `@Workflow()` gave `cls`, or `undefined` when `cls` is not a workflow class. */
export function workflowTypeOf(cls: unknown): string | undefined {
  if (typeof cls !== "function") return undefined;
  const meta = Reflect.getOwnMetadata(WORKFLOW_METADATA, cls) as { name?: unknown } | undefined;
  return typeof meta?.name === "string" ? meta.name : undefined;
}

/** Whether `cls` is a class declared with `@Workflow()` (or `registerWorkflow`). */
export function isWorkflowClass(cls: unknown): cls is WorkflowClass {
  return workflowTypeOf(cls) !== undefined;
}
