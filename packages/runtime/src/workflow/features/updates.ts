import { RejectedError } from "../../core/errors.js";
import type { CarriedUpdate, UpdateRecord } from "../../journal/records.js";
import { unknownHandler } from "../registry.js";
import { asError, type RecordAppliers, type RunCursor } from "./run-cursor.js";

export type UpdateOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** An outcome and when it was journaled. */
type Dated = UpdateOutcome & { readonly at: number };

/**
 * Updates: an `update` record runs the handler at its point of the journal, and the handler's outcome
 * is journaled as `update-result`, from which a repeated update ID is answered.
 */
export class Updates {
  private readonly results = new Map<string, Dated>();
  private readonly accepted = new Set<string>();
  /** Updates whose handler runs and has not journaled its outcome: a run continuing as new hands them on. */
  private readonly running = new Map<string, UpdateRecord>();
  /** Outcomes journaled and not yet durable: a run continuing as new hands them on too. */
  private readonly journaled = new Map<string, Dated>();
  /** Updates whose result the journal being replayed holds already: it is not journaled again. */
  private readonly replayedResults = new Set<string>();

  constructor(private readonly run: RunCursor) {}

  /** The journal loaded for replay holds the result of update `id`. */
  resultReplayed(id: string): void {
    this.replayedResults.add(id);
  }

  /** Runs an update's validator; a throw becomes a `RejectedError` and nothing is recorded. */
  validate(name: string, arg: unknown): void {
    const { definition, workflowId, instance } = this.run;
    const update = definition.updates.get(name);
    if (update === undefined) throw unknownHandler("update", name, definition, workflowId);
    if (update.validate === undefined) return;
    try {
      update.validate.call(instance, arg);
    } catch (e) {
      if (e instanceof RejectedError) throw e;
      throw new RejectedError(
        `update '${name}' of ${definition.name} (ID ${workflowId}) was rejected: ${(e as Error)?.message ?? String(e)}`,
        { reason: "update-rejected", cause: e },
      );
    }
  }

  /** The recorded outcome of update `id`, once its result record has been applied. */
  outcome(id: string): UpdateOutcome | undefined {
    return this.results.get(id);
  }

  /** True when update `id` was accepted (journaled, or being journaled) by this run. */
  knows(id: string): boolean {
    return this.accepted.has(id);
  }

  /** Reserves update `id` before its record is appended, so a concurrent retry waits for it instead. */
  claim(id: string): void {
    this.accepted.add(id);
  }

  /**
   * Runs the handler of the update at this point of the journal and journals its outcome.
   * `validated`: whether its validator already accepted it; an update a start record carries
   * (`updateWithStart`) meets its validator here, and a refusal is its journaled outcome.
   */
  apply(record: UpdateRecord, validated = true): void {
    const { id, name, arg } = record;
    const run = this.run;
    this.accepted.add(id);
    this.running.set(id, record);
    const update = run.definition.updates.get(name);
    let result: Promise<unknown>;
    if (update === undefined || !run.instance) {
      result = Promise.reject(unknownHandler("update", name, run.definition, run.workflowId));
    } else {
      try {
        if (!validated) this.validate(name, arg);
        result = Promise.resolve((run.instance[update.method] as (a: unknown) => unknown)(arg));
      } catch (e) {
        result = Promise.reject(e);
      }
    }
    const done = (outcome: { ok: true; value: unknown } | { ok: false; error: Error }): void => {
      if (this.replayedResults.has(id)) return;
      run.whenLive(() => {
        const at = run.host.clock.now();
        this.running.delete(id);
        try {
          run.record({ kind: "update-result", id, at, ...outcome });
          this.journaled.set(id, { ...outcome, at });
        } catch (encodeError) {
          const error = asError(encodeError);
          run.recordOrBreak({ kind: "update-result", id, at, ok: false, error });
          this.journaled.set(id, { ok: false, error, at });
        }
      });
    };
    result.then(
      (value) => done({ ok: true, value }),
      (error: unknown) => done({ ok: false, error: asError(error) }),
    );
  }

  applyResult(id: string, outcome: Dated): void {
    this.results.set(id, outcome);
    this.running.delete(id);
    this.journaled.delete(id);
  }

  /** Outcomes an earlier run of the ID applied: a repeated update ID is answered from them. */
  remember(carried: readonly CarriedUpdate[]): void {
    for (const u of carried) {
      this.accepted.add(u.id);
      this.results.set(u.id, u.ok ? { ok: true, value: u.value, at: u.at } : { ok: false, error: u.error, at: u.at });
    }
  }

  /** IDs of the updates this run accepted whose outcome it has not journaled. */
  unanswered(): string[] {
    return [...this.accepted].filter((id) => !this.results.has(id) && !this.journaled.has(id));
  }

  /** Whether any update's handler has not journaled an outcome yet. */
  get anyUnfinished(): boolean {
    return this.running.size > 0;
  }

  /** Updates whose handler has not journaled an outcome: a run continuing as new hands them to the next, which applies them. */
  unfinished(): UpdateRecord[] {
    return [...this.running.values()];
  }

  /** Every outcome this run knows, journaled or remembered, with when. */
  outcomes(): CarriedUpdate[] {
    const out: CarriedUpdate[] = [];
    for (const [id, o] of [...this.results, ...this.journaled])
      out.push(o.ok ? { id, at: o.at, ok: true, value: o.value } : { id, at: o.at, ok: false, error: asError(o.error) });
    return out;
  }
}

export const updateRecords: RecordAppliers<"update" | "update-result", { readonly updates: Updates }> = {
  update: (run, record) => run.updates.apply(record),
  "update-result": (run, record) =>
    run.updates.applyResult(
      record.id,
      record.ok ? { ok: true, value: record.value, at: record.at } : { ok: false, error: record.error, at: record.at },
    ),
};
