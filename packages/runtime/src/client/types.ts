import type { JournalRecord } from "../journal/records.js";
import type { RunStatusValue } from "../core/status.js";

/** What happens when a start names a workflow ID that already has a run. */
export interface IdPolicy {
  /** The ID's run is still going: refuse (default), return it, or terminate it and start anew. */
  running?: "fail" | "use-existing" | "terminate-existing";
  /** The ID's last run finished: start anew (default), only if it did not succeed, or refuse. */
  finished?: "allow" | "allow-if-failed" | "refuse";
}

/** Options of `engine.start`. */
export interface StartOptions {
  idPolicy?: IdPolicy;
  /**
   * Search attributes the run starts with, journaled in its start record: `listWhere` finds the run
   * by them at once, and workflow code reads them with `ctx.attributes()`.
   */
  attributes?: Readonly<Record<string, unknown>>;
}

/** How far an update has come: validated and journaled (`"accepted"`), or its handler returned (`"completed"`). */
export type UpdateStage = "accepted" | "completed";

/** Options of `run.update`. */
export interface UpdateOptions {
  /** Deduplicates retried calls: a repeated ID returns the recorded result. A fresh ID by default. */
  id?: string;
}

/** Where a run stands, from the engine's index. */
export interface RunStatus {
  readonly id: string;
  readonly type: string;
  readonly runId: number;
  readonly status: RunStatusValue;
  readonly startedAt: number;
  readonly endedAt?: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** Why a run cannot go on (a `NonDeterminismError`, a workflow type not registered). */
  readonly error?: string;
}

/** A run's status and its journal. */
export interface RunDetail extends RunStatus {
  readonly journal: readonly JournalRecord[];
}

/** A comparison on one field of `engine.listWhere`. */
export interface FieldFilter {
  eq?: unknown;
  ne?: unknown;
  gt?: number | string;
  gte?: number | string;
  lt?: number | string;
  lte?: number | string;
  in?: readonly unknown[];
  /** Membership: the field is an array (a list of tags) that holds this value. */
  has?: unknown;
}

/**
 * A filter of `engine.listWhere`: per field (`type`, `status`, `startedAt`, `endedAt` or a search
 * attribute) a value to equal or a {@link FieldFilter}; all fields must match.
 */
export type ListFilter = Readonly<Record<string, unknown>>;
