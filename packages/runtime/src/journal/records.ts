import type { FinishedStatus } from "../core/status.js";

/**
 * The journal of a run: every durable fact about it, in the order it became durable. A run's state
 * is a pure function of this list; replay re-derives it by feeding the records to the workflow code.
 *
 * Records that answer a call of the workflow code (`step`, `timer`, `patch`, `attributes`) carry the
 * call's sequence number `seq` (calls are numbered in the order the code makes them), so replay can
 * check that the code asks for the same thing at the same point.
 */
export type JournalRecord =
  | StartRecord
  | StepRecord
  | AttemptRecord
  | SignalRecord
  | UpdateRecord
  | UpdateResultRecord
  | TimerRecord
  | FiredRecord
  | PatchRecord
  | AttributesRecord
  | HeartbeatRecord
  | CompletionRecord
  | ChildRecord
  | ChildResultRecord
  | CancelRecord
  | StoppedRecord
  | ResumedRecord
  | FinishRecord;

export type RecordKind = JournalRecord["kind"];

interface RecordBase {
  /** Wall-clock time (ms since the epoch) when the record was appended; workflow time on replay. */
  readonly at: number;
}

/** An update delivered together with the start of a run (`updateWithStart`). */
export interface StartUpdate {
  readonly id: string;
  readonly name: string;
  readonly arg: unknown;
}

export interface StartRecord extends RecordBase {
  readonly kind: "start";
  readonly type: string;
  /** Grows with every new run of one workflow ID. */
  readonly runId: number;
  /** Seed of the run's deterministic `random()` and `uuid()`. */
  readonly seed: number;
  readonly input: unknown;
  readonly update?: StartUpdate;
  /** The run this one continues, and why. */
  readonly from?: { readonly runId: number; readonly reason: "continue-as-new" | "reset" };
  /**
   * For a reset: how many records after this start are the copy of the replaced run's journal. A
   * power loss may keep only part of them; until all are durable the new run has not begun.
   */
  readonly copied?: number;
  /** For a child run: its parent and the parent's call that started it. */
  readonly parent?: ParentLink;
  /** The cluster request this start performs, so a shard's next owner does not perform it again. */
  readonly request?: string;
  /** A signal delivered together with the start of the run (`signalWithStart`), applied right after it. */
  readonly signal?: { readonly name: string; readonly value: unknown };
  /** Search attributes the run starts with (`start(..., { attributes })`). */
  readonly attributes?: Readonly<Record<string, unknown>>;
  /** The caller's trace context (a W3C `traceparent`), so the run's spans join the caller's trace. */
  readonly trace?: string;
  /** What the run this one replaces (see `from`) hands on to it. */
  readonly carried?: Carried;
  /** The engine behaviours the run was started under (see `run-flags.ts`); none for runs of older engines. */
  readonly flags?: readonly number[];
}

/**
 * What a run replaced by the next run of its ID (continue-as-new, reset) hands on, so that nothing
 * acknowledged to the ID is lost or applied twice: the messages its code never saw, and what it
 * performed that a caller may ask for again.
 */
export interface Carried {
  /** Signals, updates and a cancellation acknowledged to the replaced run that its code did not see: applied right after the start, in this order. */
  readonly messages?: readonly CarriedMessage[];
  /** Requests performed by earlier runs of the ID, each with when, so that one sent again is not performed twice. */
  readonly requests?: readonly (readonly [request: string, at: number])[];
  /** Outcomes of updates earlier runs of the ID applied, so that a repeated update ID is answered from them. */
  readonly updates?: readonly CarriedUpdate[];
}

/** A message a replaced run's code did not see, as it was journaled there. */
export type CarriedMessage = SignalRecord | UpdateRecord | CancelRecord;

/** The outcome of an update an earlier run of the ID applied, and when. */
export interface CarriedUpdate {
  readonly id: string;
  readonly at: number;
  readonly ok: boolean;
  readonly value?: unknown;
  readonly error?: Error;
}

export interface StepRecord extends RecordBase {
  readonly kind: "step";
  readonly seq: number;
  readonly name: string;
  readonly ok: boolean;
  /** The step's result when `ok`. */
  readonly value?: unknown;
  /** The step's final error when not `ok`. */
  readonly error?: Error;
  readonly attempts: number;
  /** A fingerprint of the call's arguments (see `fingerprintArgs`); absent for inline steps and older records. */
  readonly args?: string;
}

/**
 * An attempt of step call `seq` failed and another is due at `retryAt`. Only failures are journaled
 * this way (a step that succeeds first time has its step record alone), so that the retry budget and
 * the back-off hold across restarts.
 */
export interface AttemptRecord extends RecordBase {
  readonly kind: "attempt";
  readonly seq: number;
  readonly name: string;
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  readonly retryAt: number;
  readonly error: Error;
  /** When the call's first attempt began, for a policy's bound on the total time; absent in older journals. */
  readonly since?: number;
}

export interface SignalRecord extends RecordBase {
  readonly kind: "signal";
  readonly name: string;
  readonly value: unknown;
  /** The cluster request this signal performs, so a shard's next owner does not deliver it again. */
  readonly request?: string;
  /** The sender's trace context (a W3C `traceparent`). */
  readonly trace?: string;
}

/** An update accepted by its validator; its handler runs at this point of the journal. */
export interface UpdateRecord extends RecordBase {
  readonly kind: "update";
  readonly id: string;
  readonly name: string;
  readonly arg: unknown;
  /** The caller's trace context (a W3C `traceparent`). */
  readonly trace?: string;
}

/** The outcome of an update's handler; a repeated update ID is answered from it. */
export interface UpdateResultRecord extends RecordBase {
  readonly kind: "update-result";
  readonly id: string;
  readonly ok: boolean;
  readonly value?: unknown;
  readonly error?: Error;
}

/** A durable timer was set by `sleep`, `sleepUntil` or a wait's timeout. */
export interface TimerRecord extends RecordBase {
  readonly kind: "timer";
  readonly seq: number;
  readonly until: number;
}

/** The timer set by call `seq` fell due. */
export interface FiredRecord extends RecordBase {
  readonly kind: "fired";
  readonly seq: number;
}

/** `ctx.patched(id)` took the new code path here. */
export interface PatchRecord extends RecordBase {
  readonly kind: "patch";
  readonly seq: number;
  readonly id: string;
}

/** `ctx.setAttributes` merged `attributes`, or `ctx.removeAttributes` removed the names in `removed`. */
export interface AttributesRecord extends RecordBase {
  readonly kind: "attributes";
  readonly seq: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly removed?: readonly string[];
}

/** The attributes after a record's change: `attributes` merged in, then `removed` taken out. */
export function applyAttributes(
  current: Readonly<Record<string, unknown>> | undefined,
  change: { readonly attributes?: Readonly<Record<string, unknown>> | undefined; readonly removed?: readonly string[] | undefined },
): Record<string, unknown> {
  const next = { ...current, ...change.attributes };
  for (const name of change.removed ?? []) delete next[name];
  return next;
}

/** A running step reported progress; the next attempt starts from it, also after a restart. */
export interface HeartbeatRecord extends RecordBase {
  readonly kind: "heartbeat";
  readonly seq: number;
  readonly progress: unknown;
}

/** `engine.complete` or `engine.fail` answered the token a step of `ctx.awaitCompletion` sent. */
export interface CompletionRecord extends RecordBase {
  readonly kind: "completion";
  readonly token: string;
  readonly ok: boolean;
  readonly value?: unknown;
  readonly error?: Error;
  /** The cluster request this record performs, so a shard's next owner does not perform it again. */
  readonly request?: string;
}

/** Call `seq` started a child run (or failed to). */
/** A child run's parent: the parent run and the call of it that started the child. */
export interface ParentLink {
  readonly id: string;
  readonly runId: number;
  readonly seq: number;
  /**
   * What happens to the child when the parent run ends or is replaced first, as the parent's child
   * record says. Kept with the child too, so recovery can apply it to the children of a run a later
   * run of its ID replaced (whose index entry is gone). Absent in journals written before it was kept.
   */
  readonly close?: ClosePolicy;
}

/** What happens to a child when its parent run ends or is replaced first. */
export type ClosePolicy = "terminate" | "request-cancel" | "abandon";

export interface ChildRecord extends RecordBase {
  readonly kind: "child";
  readonly seq: number;
  readonly childId: string;
  readonly ok: boolean;
  readonly childRunId?: number;
  /** What happens to the child when the parent ends first. */
  readonly close?: ClosePolicy;
  readonly error?: Error;
}

/** The child started by call `seq` finished. */
export interface ChildResultRecord extends RecordBase {
  readonly kind: "child-result";
  readonly seq: number;
  readonly childId: string;
  readonly status: FinishedStatus;
  readonly value?: unknown;
  readonly error?: Error;
}

/** Cancellation was requested; workflow code gets a `CancelledError` at its current wait. */
export interface CancelRecord extends RecordBase {
  readonly kind: "cancel";
  readonly reason: string;
  /** The cluster request this record performs, so a shard's next owner does not perform it again. */
  readonly request?: string;
}

/**
 * The engine found that the run cannot go on from here: its code no longer matches this journal, or
 * its workflow could not be built, or a key this journal was sealed with is missing. Written once,
 * so readers of the data directory see the run as stopped; the code never sees it.
 */
export interface StoppedRecord extends RecordBase {
  readonly kind: "stopped";
  /** The `code` of the error that stopped the run (`FUSEE_NON_DETERMINISM`, `FUSEE_CODEC`, ...). */
  readonly code: string;
  /** Why, as the error said it (the engine's words: IDs, names and key IDs, no payload). */
  readonly message: string;
}

/** A run the engine had found stopped went on again (its code, its registration or its key was mended). */
export interface ResumedRecord extends RecordBase {
  readonly kind: "resumed";
}

export interface FinishRecord extends RecordBase {
  readonly kind: "finish";
  readonly status: FinishedStatus;
  readonly value?: unknown;
  readonly error?: Error;
  /** The cluster request this record performs, so a shard's next owner does not perform it again. */
  readonly request?: string;
}

/** Records that answer a numbered call of the workflow code. */
export type CallRecord = StepRecord | TimerRecord | PatchRecord | AttributesRecord | ChildRecord;

/** The journal record of kind `K`. */
export type RecordOf<K extends RecordKind> = Extract<JournalRecord, { kind: K }>;
