/** The workflow type every engine process of the simulated cluster runs. */
export const ACC_TYPE = "cluster-sim-acc";

/** The workflow type that sends messages to other runs from workflow code (`ctx.signalWorkflow` and the rest). */
export const RELAY_TYPE = "cluster-sim-relay";

/** The workflow type that starts children of `ACC_TYPE` with close policies, then ends or continues as new. */
export const PARENT_TYPE = "cluster-sim-parent";

export type ClosePolicy = "terminate" | "request-cancel" | "abandon";

/** The input of a parent run: its children, and whether it ends or continues as new once signalled `finish`. */
export interface Family {
  readonly children: readonly { readonly id: string; readonly close: ClosePolicy }[];
  /**
   * `reset`: the harness resets the run to its step `spawned`, after the children started (the new
   * run keeps them), before it signals `finish`. `done`: the run after a continue-as-new, which ends at once.
   */
  readonly then: "end" | "continue" | "reset" | "done";
}

/** The workflow type a schedule's instants start; its runs end at once. */
export const TICK_TYPE = "cluster-sim-tick";

/**
 * The workflow type the schedule with operations starts (see `cluster-schedule-ops.ts`): its runs
 * last `holdMs`, so the overlap policy has runs to keep apart.
 */
export const TOCK_TYPE = "cluster-sim-tock";

/** The workflow type batched events start (`engine.batch`): its runs return their input, the batch's events. */
export const BATCH_TYPE = "cluster-sim-batch";

/** A schedule's spec as the harness sends it: every `everyMs`, its runs of `TOCK_TYPE` lasting `holdMs`. */
export interface TockSpec {
  readonly everyMs: number;
  readonly overlap: "skip" | "buffer-one";
  readonly holdMs: number;
}

/** What the harness reads of a run of the schedule with operations. */
export interface TockRun {
  readonly id: string;
  readonly runId: number;
  readonly status: string;
  readonly startedAt: number;
  readonly endedAt?: number;
}

/** The statuses of a run that ended; the simulated runs end only when cancelled. */
export const FINISHED: ReadonlySet<string> = new Set(["ok", "failed", "cancelled", "terminated", "stopped"]);

/** The answer of a `bump` update: how many updates the run applied, and the sum of their values. */
export interface Bumped {
  readonly count: number;
  readonly total: number;
}

/** What a run of `ACC_TYPE` holds: the tags of the signals and updates it applied, in order, and their count and sum. */
export interface AccState {
  readonly tags: string[];
  readonly updates: string[];
  readonly count: number;
  readonly total: number;
}

/** The input of a run of `ACC_TYPE`: how many messages each of its runs applies before it continues as new, and the state handed on. */
export interface AccInput {
  readonly every?: number;
  readonly state?: AccState;
}

/** The argument of a `bump` update: the value, and a tag naming the update in the target's journal. */
export interface Bump {
  readonly by: number;
  readonly tag: string;
}

/** One message a relay run sends, in its plan's order, with the `ctx` call named by `op`. */
export type Relayed =
  | { readonly op: "signalWorkflow"; readonly to: string; readonly tag: string }
  | { readonly op: "updateWorkflow"; readonly to: string; readonly tag: string; readonly by: number }
  | { readonly op: "cancelWorkflow"; readonly to: string }
  | { readonly op: "startWorkflow"; readonly to: string; readonly every?: number }
  | { readonly op: "signalWithStart"; readonly to: string; readonly tag: string; readonly every?: number };

/** What the relay's code saw for one message: sent (an update's answer in `value`), or the error the target answered. */
export interface RelayOutcome {
  readonly ok: boolean;
  readonly value: unknown;
  readonly error?: string;
}

/** What an engine process reads from a run's journal for the checks. */
export interface Inspection {
  readonly status: string;
  /** Runs of the ID the journal shows (1 unless the run was replaced). */
  runs: number;
  /** The values of the `add` signals, in journal order (a signal carried by the start record first). */
  readonly tags: string[];
  /** The cluster request each `add` signal performed (null: performed by the process it was sent to). */
  readonly signalRequests: (string | null)[];
  /** The `bump` updates the journal accepted: their update IDs and tags. */
  readonly updates: { readonly id: string; readonly tag: string }[];
  /** The answers the journal holds, by update ID. */
  readonly results: { readonly id: string; readonly ok: boolean; readonly value: Bumped | null }[];
  /** Cancel records. */
  cancels: number;
  /** The steps of the run's journal (a relay's message steps among them), in order. */
  readonly steps: { readonly name: string; readonly ok: boolean }[];
  /** What the workflow's `state` query answers, for a run of `ACC_TYPE` that has not ended. */
  state?: AccState;
}
