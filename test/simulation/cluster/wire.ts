/** The workflow type every engine process of the simulated cluster runs. */
export const ACC_TYPE = "cluster-sim-acc";

/** The statuses of a run that ended; the simulated runs end only when cancelled. */
export const FINISHED: ReadonlySet<string> = new Set(["ok", "failed", "cancelled", "terminated", "stopped"]);

/** The answer of a `bump` update: how many updates the run applied, and the sum of their values. */
export interface Bumped {
  readonly count: number;
  readonly total: number;
}

/** What an engine process reads from a run's journal for the checks. */
export interface Inspection {
  readonly status: string;
  /** Runs of the ID the journal shows (1 unless the run was replaced). */
  runs: number;
  /** The values of the `add` signals, in journal order. */
  readonly tags: string[];
  /** The cluster request each `add` signal performed (null: performed by the process it was sent to). */
  readonly signalRequests: (string | null)[];
  /** The IDs of the `bump` updates the journal accepted. */
  readonly updates: string[];
  /** The answers the journal holds, by update ID. */
  readonly results: { readonly id: string; readonly ok: boolean; readonly value: Bumped | null }[];
  /** Cancel records. */
  cancels: number;
  /** What the workflow's `state` query answers, for a run that has not ended. */
  state?: { readonly tags: string[]; readonly count: number; readonly total: number };
}
