import type { FinishedStatus } from "../core/status.js";
import { applyAttributes, type ChildRecord, type JournalRecord } from "./records.js";

/**
 * What folding a run's journal tells whoever keeps the run's state, for run `R` of theirs: the
 * engine's index entry, or a data-directory reader's. One object per kind of keeper, so folding a
 * record allocates nothing. The hooks a keeper has no use for are left out.
 */
export interface RunFold<R> {
  attributesOf(run: R): Readonly<Record<string, unknown>> | undefined;
  setAttributes(run: R, attributes: Record<string, unknown>): void;
  finished(run: R, status: FinishedStatus, at: number): void;
  /** The engine found the run unable to go on (see `StoppedRecord`), or found it going on again (`undefined`). */
  stopped(run: R, reason: { readonly code: string; readonly message: string } | undefined): void;
  /** Call `seq` set a durable timer due at `until`. */
  timer?(run: R, seq: number, until: number): void;
  /** The timer of call `seq` fell due. */
  fired?(run: R, seq: number): void;
  /** Call `seq` started child `childId` (run `runId`), to be closed by `close` when the run ends first. */
  childStarted?(run: R, childId: string, seq: number, runId: number, close: NonNullable<ChildRecord["close"]>): void;
  /** The child's result came. */
  childEnded?(run: R, childId: string): void;
  /** `ctx.patched(id)` took the new path at `at`. */
  patched?(run: R, id: string, at: number): void;
}

/**
 * A record, or the header of one as the log holds it: the fields the fold reads. Attribute records
 * and starts that carry attributes must come decoded (their values are in the payload).
 */
export type FoldedRecord = JournalRecord | { readonly kind: string; readonly [field: string]: unknown };

/**
 * Folds one record of a run's current journal (in journal order, after the keeper began the run on
 * its start) into the run's state: search attributes (a start's, then each change, removals
 * included), the end, a stop and its mending, timers, children and patches. The engine's index, its
 * one-pass recovery and the data-directory reader all fold through here, so they cannot disagree.
 */
export function foldRecord<R>(run: R, record: FoldedRecord, on: RunFold<R>): void {
  const r = record as Record<string, unknown>;
  switch (record.kind) {
    case "start":
      if (r["attributes"] !== undefined && r["attributes"] !== true)
        on.setAttributes(run, applyAttributes(undefined, { attributes: r["attributes"] as Record<string, unknown> }));
      return;
    case "attributes":
      on.setAttributes(
        run,
        applyAttributes(on.attributesOf(run), {
          attributes: r["attributes"] as Record<string, unknown> | undefined,
          removed: r["removed"] as readonly string[] | undefined,
        }),
      );
      return;
    case "finish":
      on.finished(run, r["status"] as FinishedStatus, r["at"] as number);
      return;
    case "stopped":
      on.stopped(run, { code: String(r["code"]), message: String(r["message"]) });
      return;
    case "resumed":
      on.stopped(run, undefined);
      return;
    case "timer":
      on.timer?.(run, r["seq"] as number, r["until"] as number);
      return;
    case "fired":
      on.fired?.(run, r["seq"] as number);
      return;
    case "child":
      if (r["ok"] === true)
        on.childStarted?.(
          run,
          r["childId"] as string,
          r["seq"] as number,
          (r["childRunId"] as number | undefined) ?? 0,
          (r["close"] as ChildRecord["close"]) ?? "terminate",
        );
      return;
    case "child-result":
      on.childEnded?.(run, r["childId"] as string);
      return;
    case "patch":
      on.patched?.(run, r["id"] as string, r["at"] as number);
      return;
  }
}
