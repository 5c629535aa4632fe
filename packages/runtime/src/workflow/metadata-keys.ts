/** Reflect-metadata keys under which fusee's decorators leave their marks on a class. */
/**
 * The key of `@Workflow()`'s mark on a class (`{ name }`, the workflow type): integrations find
 * workflow classes among their providers by it.
 *
 * @example
 * const meta = Reflect.getOwnMetadata(WORKFLOW_METADATA, cls) as { name: string } | undefined;
 */
export const WORKFLOW_METADATA = "fusee:workflow";
export const STEPS_METADATA = "fusee:steps";
export const SIGNALS_METADATA = "fusee:signals";
export const QUERIES_METADATA = "fusee:queries";
export const UPDATES_METADATA = "fusee:updates";
/** Signal names awaited with `ctx.waitFor`, as `fusee gen` found them (see `registerWorkflowTypes`). */
export const MAILBOXES_METADATA = "fusee:mailboxes";
