/** Reflect-metadata keys under which fusee's decorators leave their marks on a class. */
export const WORKFLOW_METADATA = "fusee:workflow";
export const STEPS_METADATA = "fusee:steps";
export const SIGNALS_METADATA = "fusee:signals";
export const QUERIES_METADATA = "fusee:queries";
export const UPDATES_METADATA = "fusee:updates";
/** Signal names awaited with `ctx.waitFor`, as `fusee gen` found them (see `registerWorkflowTypes`). */
export const MAILBOXES_METADATA = "fusee:mailboxes";
