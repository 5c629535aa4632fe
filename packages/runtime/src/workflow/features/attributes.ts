import { applyAttributes } from "../../journal/records.js";
import type { RecordAppliers, RunCursor } from "./run-cursor.js";

/**
 * Search attributes as the workflow code sees them (`ctx.attributes()`): those of the start record,
 * then each `ctx.setAttributes` / `ctx.removeAttributes` call, whose records the engine's index reads
 * to make runs searchable. The code makes the same calls on every replay, so the view is the same.
 */
export class SearchAttributes {
  private current: Readonly<Record<string, unknown>> = {};

  constructor(private readonly run: RunCursor) {}

  get(): Readonly<Record<string, unknown>> {
    return this.current;
  }

  /** The start record's attributes. */
  begin(attributes: Readonly<Record<string, unknown>> | undefined): void {
    if (attributes !== undefined) this.current = { ...attributes };
  }

  change(attributes: Record<string, unknown>, removed: readonly string[]): void {
    const run = this.run;
    const seq = run.call("attributes", undefined);
    this.current = applyAttributes(this.current, { attributes, removed });
    if (!run.recorded(seq)) {
      const change = { attributes: { ...attributes }, ...(removed.length > 0 ? { removed: [...removed] } : {}) };
      run.whenLive(() => run.record({ kind: "attributes", seq, ...change, at: run.host.clock.now() }));
    }
  }
}

// The record only answers its call: the view changed when the code made it.
export const attributeRecords: RecordAppliers<"attributes"> = {
  attributes: () => undefined,
};
