import type { DependencyContainer } from "tsyringe";
import { DeterministicRandom } from "../../core/deterministic-random.js";
import { CancelledError, ConfigError, FuseeError, TerminatedError } from "../../core/errors.js";
import type { FinishedStatus } from "../../core/status.js";
import { performedBy, remembered } from "../../journal/carried.js";
import type { Carried, CarriedMessage, JournalRecord, StartRecord } from "../../journal/records.js";
import { hasFlag, RUN_FLAGS } from "../../journal/run-flags.js";
import { Ctx } from "../ctx.js";
import type { CtxBackend } from "../ctx-backend.js";
import { explainMissingTypeInfo } from "../injection-diagnosis.js";
import { bindInstance, type StepHost } from "../run-binding.js";
import { afterTurn } from "../settle-turn.js";
import type { Cancellation } from "./cancellation.js";
import { asError, type RecordAppliers, type RunCursor, type StepAborts } from "./run-cursor.js";
import type { SearchAttributes } from "./attributes.js";
import type { Signals } from "./signals.js";
import type { Updates } from "./updates.js";

/** What a run's life sees of its executor: the cursor, and the features a start applies and an end aborts. */
export type LifecycleRun = RunCursor &
  CtxBackend &
  StepHost & {
    readonly lifecycle: Lifecycle;
    readonly cancellation: Cancellation;
    readonly signals: Signals;
    readonly updates: Updates;
    /** Whether an update handler has not journaled its outcome; asked at every run's end without making the run's updates. */
    readonly updatesUnfinished: boolean;
    readonly searchAttributes: SearchAttributes;
    readonly steps: StepAborts;
  };

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
  /** How the body ended, once it did (not set by continue-as-new). */
  private outcome: BodyOutcome | undefined = undefined;
  private continued = false;
  /** The body ended and its end waits for the code to settle once more (see `bodyFinished`). */
  private closing = false;
  /** Requests the applied records performed or the start remembers, with when: a next run of the ID remembers them. */
  private performed: Map<string, number> | undefined = undefined;
  /** Messages that arrived after the code continued as new: the next run applies them. */
  private unseen: CarriedMessage[] | undefined = undefined;

  constructor(
    private readonly run: LifecycleRun,
    private readonly container: DependencyContainer,
  ) {}

  /** The run's deterministic source of `random()` and `uuid()`, seeded by its start record. */
  rng(): DeterministicRandom {
    if (this.random === undefined) throw new FuseeError("the run has not started yet");
    return this.random;
  }

  /** What names this run in its steps' idempotency keys (see `stepKey`). */
  keyPrefix = "";

  begin(start: Pick<StartRecord, "seed" | "input" | "at" | "flags">): void {
    const run = this.run;
    const { seed, input } = start;
    this.random = new DeterministicRandom(seed);
    // A run number alone repeats once retention forgot an ID; its start time does not.
    this.keyPrefix = hasFlag(start.flags, RUN_FLAGS.keysWithStartTime)
      ? `${run.workflowId}:${run.host.runId}.${start.at.toString(36)}`
      : `${run.workflowId}:${run.host.runId}`;
    let instance: Record<string, unknown>;
    try {
      const child = this.container.createChildContainer();
      child.register(Ctx, { useValue: new Ctx(run) });
      instance = child.resolve(run.definition.cls) as Record<string, unknown>;
    } catch (e) {
      const what = `workflow ${run.definition.name} (ID ${run.workflowId})`;
      run.breakWith(
        explainMissingTypeInfo(run.definition.cls, e, what) ??
          new ConfigError(`${what} could not be constructed: ${(e as Error)?.message ?? String(e)}`, { cause: e }),
      );
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
    this.outcome = outcome;
    if (this.finishReplayed) return;
    // Records appended before the finish (a cancel a client wrote while the code ran its first
    // records, say) come first in the journal: the finish waits until the code reacted to them.
    run.whenLive(() => run.whenCaughtUp(() => this.end(outcome)));
  }

  private end(outcome: BodyOutcome): void {
    const run = this.run;
    if (this.finished) return;
    if (!run.updatesUnfinished) return this.recordFinish(outcome);
    // Update handlers that return without waiting (one started with the run, say) journal their
    // results before the run ends: the end waits for the code to settle once more.
    this.closing = true;
    afterTurn({
      settled: () => {
        this.closing = false;
        this.recordFinish(outcome);
      },
    });
  }

  /** True while the body's end waits for the code to settle before it is journaled. */
  get finishing(): boolean {
    return this.closing;
  }

  private recordFinish(ended: BodyOutcome): void {
    const run = this.run;
    if (this.finished) return;
    // The finish follows every record applied so far. A body that returned before a cancellation
    // journaled ahead of its finish reached it was never told of it: the run ends cancelled, as
    // the journal's order says, and as a replay of that journal does. Code that caught a
    // cancellation already ran its clean-up for it: a repeated one changes nothing.
    const cancelled = ended.status === "ok" && !run.cancellation.told ? run.cancellation.take() : undefined;
    const outcome: BodyOutcome = cancelled === undefined ? ended : { status: "cancelled", error: cancelled };
    this.outcome = outcome;
    const at = run.host.clock.now();
    try {
      run.record({ kind: "finish", at, ...outcome });
    } catch (encodeError) {
      run.recordOrBreak({ kind: "finish", at, status: "failed", error: asError(encodeError) });
    }
  }

  continueAsNew(input: unknown, attributes: Readonly<Record<string, unknown>> | undefined): Promise<never> {
    const run = this.run;
    if (!this.continued) {
      this.continued = true;
      this.bodyDone = true;
      this.unseen = [];
      run.whenLive(() => {
        if (!run.host.closed() && !run.broken) run.host.continueAsNew(input, attributes);
      });
    }
    return new Promise<never>(() => undefined);
  }

  /** True once the code continued as new: messages that arrive from then on are the next run's. */
  get continuing(): boolean {
    return this.continued;
  }

  /** Keeps a message that arrived after the code continued as new for the next run; false for any other record. */
  divert(record: JournalRecord): boolean {
    if (this.unseen === undefined || (record.kind !== "signal" && record.kind !== "update" && record.kind !== "cancel")) return false;
    this.unseen.push(record);
    return true;
  }

  /** Notes the requests an applied record performed, for the run that may replace this one. */
  note(record: JournalRecord): void {
    for (const [request, at] of performedBy(record)) (this.performed ??= new Map()).set(request, at);
  }

  /**
   * What the run hands on to the run that continues it, once every record it was sent is applied:
   * the messages its code did not see (updates whose handler had not finished, signals no `waitFor`
   * took, a cancellation it was not told of, and whatever arrived after it continued), and the
   * requests and update outcomes of the last `windowMs` before `now`, so none is performed twice.
   */
  handOn(now: number, windowMs: number): Carried {
    const run = this.run;
    const cancel = run.cancellation.untaken();
    const messages: CarriedMessage[] = [
      ...run.updates.unfinished(),
      ...run.signals.untaken(),
      ...(cancel === undefined ? [] : [cancel]),
      ...(this.unseen ?? []),
    ];
    const requests = remembered([...(this.performed ?? [])], now, windowMs);
    const updates = remembered(run.updates.outcomes(), now, windowMs);
    return {
      ...(messages.length > 0 ? { messages } : {}),
      ...(requests.length > 0 ? { requests } : {}),
      ...(updates.length > 0 ? { updates } : {}),
    };
  }

  /** True once the body returned, threw or continued as new. */
  get ended(): boolean {
    return this.bodyDone;
  }

  /**
   * How the body ended, in words for a determinism error: `and has thrown Error: ...` when it threw
   * (the error is the news, not that it no longer asks for what the journal holds), else `fallback`.
   */
  ending(fallback: string): string {
    const outcome = this.outcome;
    if (outcome === undefined || outcome.status === "ok") return fallback;
    return `and has thrown ${outcome.error.name}: ${outcome.error.message}`;
  }

  /** Whether the body ended the way a finish record says the run did (status, and for a failure the error's message). */
  endedAs(record: { status: string; error?: Error }): boolean {
    const outcome = this.outcome;
    if (outcome === undefined) return this.continued;
    if (outcome.status !== record.status) return false;
    return outcome.status === "ok" || record.error === undefined || outcome.error.message === record.error.message;
  }
}

export const lifecycleRecords: RecordAppliers<"start" | "finish" | "stopped" | "resumed", LifecycleRun> = {
  // What the engine noted of the run's state: nothing the code sees.
  stopped: () => undefined,
  resumed: () => undefined,
  start: (run, record, replayed) => {
    if (record.attributes !== undefined) run.searchAttributes.begin(record.attributes);
    if (record.carried?.updates !== undefined) run.updates.remember(record.carried.updates);
    run.lifecycle.begin(record);
    if (record.signal) run.signals.apply(record.signal.name, record.signal.value, record.at);
    // Unlike an update record, a start carrying an update is written before any validator could run.
    if (record.update) run.updates.apply({ kind: "update", ...record.update, at: record.at }, false);
    // What the replaced run's code never saw reaches this run's code, as if it had just arrived.
    for (const m of record.carried?.messages ?? []) {
      if (m.kind === "signal") run.signals.apply(m.name, m.value, m.at);
      else if (m.kind === "update") run.updates.apply(m);
      else run.cancellation.apply(m, replayed);
    }
  },
  finish: (run, record, replayed, position) => {
    // The code must have ended where the journal says it did, unless the run was ended from outside.
    if (replayed && record.status !== "terminated" && record.status !== "cancelled") {
      if (!run.lifecycle.ended) {
        run.breakWith(run.mismatch(position, record, "and has not finished"));
        return;
      }
      // The code reached the end, but it must end the way the run did: a throw where the run returned is a difference.
      if (!run.lifecycle.endedAs(record)) {
        run.breakWith(run.mismatch(position, record, run.lifecycle.ending("and ended another way")));
        return;
      }
    }
    run.lifecycle.finished = record.status;
    if (record.status === "terminated")
      run.steps.abort(record.error ?? new TerminatedError(`run ${run.host.runId} of ${run.workflowId} was terminated`));
  },
};
