import type { DependencyContainer } from "tsyringe";
import { DeterministicRandom } from "../../core/deterministic-random.js";
import { CancelledError, ConfigError, FuseeError, TerminatedError } from "../../core/errors.js";
import type { FinishedStatus } from "../../core/status.js";
import { Ctx, type CtxBackend } from "../ctx.js";
import { explainMissingTypeInfo } from "../injection-diagnosis.js";
import { bindInstance, type StepHost } from "../run-binding.js";
import { asError, type RecordAppliers, type RunParts } from "./run-parts.js";

type BodyOutcome = { status: "ok"; value: unknown } | { status: "failed" | "cancelled"; error: Error };

/**
 * The run's life: the `start` record makes the workflow instance (through the container) and calls
 * its `run()`; the body's end is journaled as `finish`, unless the journal holds it already; the
 * `finish` record ends the run.
 */
export class Lifecycle {
  instance: Record<string, unknown> | undefined = undefined;
  finished: FinishedStatus | undefined = undefined;
  /** The journal loaded for replay holds the run's finish: the body's end is not journaled again. */
  finishReplayed = false;
  private random: DeterministicRandom | undefined = undefined;
  private bodyDone = false;
  private continued = false;

  constructor(
    private readonly run: RunParts & CtxBackend & StepHost,
    private readonly container: DependencyContainer,
  ) {}

  /** The run's deterministic source of `random()` and `uuid()`, seeded by its start record. */
  rng(): DeterministicRandom {
    if (this.random === undefined) throw new FuseeError("the run has not started yet");
    return this.random;
  }

  begin(seed: number, input: unknown): void {
    const run = this.run;
    this.random = new DeterministicRandom(seed);
    let instance: Record<string, unknown>;
    try {
      const child = this.container.createChildContainer();
      child.register(Ctx, { useValue: new Ctx(run) });
      instance = child.resolve(run.definition.cls) as Record<string, unknown>;
    } catch (e) {
      const what = `workflow ${run.definition.name} (ID ${run.workflowId})`;
      run.breakWith(explainMissingTypeInfo(run.definition.cls, e, what) ?? new ConfigError(`${what} could not be constructed: ${(e as Error)?.message ?? String(e)}`, { cause: e }));
      return;
    }
    this.instance = instance;
    bindInstance(instance, run);
    let body: Promise<unknown>;
    try {
      body = Promise.resolve((instance as { run(i: unknown): unknown }).run(input));
    } catch (e) {
      body = Promise.reject(e);
    }
    body.then(
      // A body that returns before its cancellation reached it ends cancelled: the journal holds the cancel.
      (value) => {
        const cancelled = run.cancellation.take();
        this.bodyFinished(cancelled === undefined ? { status: "ok", value } : { status: "cancelled", error: cancelled });
      },
      (error: unknown) => this.bodyFinished({ status: error instanceof CancelledError ? "cancelled" : "failed", error: asError(error) }),
    );
  }

  bodyFinished(outcome: BodyOutcome): void {
    const run = this.run;
    if (this.bodyDone || run.broken) return;
    this.bodyDone = true;
    if (this.finishReplayed) return;
    run.whenLive(() => {
      if (this.finished) return;
      const at = run.host.clock.now();
      try {
        run.record({ kind: "finish", at, ...outcome });
      } catch (encodeError) {
        run.recordOrBreak({ kind: "finish", at, status: "failed", error: asError(encodeError) });
      }
    });
  }

  continueAsNew(input: unknown): Promise<never> {
    const run = this.run;
    if (!this.continued) {
      this.continued = true;
      this.bodyDone = true;
      run.whenLive(() => {
        if (!run.host.closed() && !run.broken) run.host.continueAsNew(input);
      });
    }
    return new Promise<never>(() => undefined);
  }

  /** True once the body returned, threw or continued as new. */
  get ended(): boolean {
    return this.bodyDone;
  }
}

export const lifecycleRecords: RecordAppliers<"start" | "finish"> = {
  start: (run, record) => {
    run.lifecycle.begin(record.seed, record.input);
    if (record.update) run.updates.apply(record.update.id, record.update.name, record.update.arg);
  },
  finish: (run, record, replayed, position) => {
    // The code must have ended where the journal says it did, unless the run was ended from outside.
    if (replayed && record.status !== "terminated" && record.status !== "cancelled" && !run.lifecycle.ended) {
      run.breakWith(run.mismatch(position, record, "and has not finished"));
      return;
    }
    run.lifecycle.finished = record.status;
    if (record.status === "terminated") run.steps.abort(record.error ?? new TerminatedError(`run ${run.host.runId} of ${run.workflowId} was terminated`));
  },
};
