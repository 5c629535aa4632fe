import { RejectedError } from "../../core/errors.js";
import type { RecordAppliers, RunCursor } from "./run-cursor.js";

/**
 * `ctx.patched(id)`: true where the journal took the new code path (it holds a `patch` record at the
 * code's next call) or where nothing is being replayed; false for code that ran before the patch.
 */
export function patched(run: RunCursor, id: string, deprecated: boolean): boolean {
  const declared = run.definition.patches;
  if (declared !== undefined && !declared.includes(id)) {
    throw new RejectedError(
      `patch '${id}' is not declared by workflow ${run.definition.name}; declare it in @Workflow({ patches: [...] })`,
      { reason: "undeclared-patch" },
    );
  }
  const next = run.nextRecorded();
  if (next?.kind === "patch" && next.id === id) {
    run.skipCall();
    return true;
  }
  if (deprecated || run.inReplay()) return false;
  const seq = run.call("patch", id);
  run.whenLive(() => run.record({ kind: "patch", seq, id, at: run.host.clock.now() }));
  return true;
}

// The record only answers its call (checked as the code makes it); the workflow's state does not change.
export const patchRecords: RecordAppliers<"patch"> = {
  patch: () => undefined,
};
