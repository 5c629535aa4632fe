import { NonDeterminismError } from "../core/errors.js";
import { callName, describeRecord, isCallRecord } from "../journal/record-kinds.js";
import type { CallRecord, JournalRecord } from "../journal/records.js";
import type { WorkflowDefinition } from "./registry.js";
import type { RunHost } from "./run-host.js";

/** A call of the workflow code the journal being replayed answers, and where. */
interface Recorded {
  readonly record: CallRecord;
  readonly position: number;
}

/**
 * Numbers the calls of a run's workflow code and, while a journal is replayed, checks each against
 * the call record of its number: a call of another kind, name or step arguments than the journal
 * holds is non-determinism, named with the code's latest call and the journal's record.
 */
export class CallCheck {
  /** The number of the code's latest call; calls are numbered from 1 as the code makes them. */
  private seq = 0;
  /** While replaying: the journal's call records by call number. */
  private replayCalls: Map<number, Recorded> | undefined;
  /** The latest call of the code, for determinism errors. */
  private lastKind: CallRecord["kind"] | undefined;
  private lastName: string | undefined;
  private lastSeq = 0;

  constructor(
    private readonly definition: WorkflowDefinition,
    private readonly host: RunHost,
  ) {}

  /** Notes `record`, at `position` of the journal being replayed, when it answers a call. */
  replays(record: JournalRecord, position: number): void {
    if (isCallRecord(record)) (this.replayCalls ??= new Map()).set(record.seq, { record, position });
  }

  /** The replay is done: later calls are new. */
  endReplay(): void {
    this.replayCalls = undefined;
  }

  /** True when the journal being replayed answers call `seq`. */
  recorded(seq: number): boolean {
    return this.replayCalls?.has(seq) === true;
  }

  /** Whether the code has made call `seq` (so a record answering it has a call to answer). */
  made(seq: number): boolean {
    return seq <= this.seq;
  }

  /** Counts the code's next call as answered by the journal without numbering it anew. */
  skip(): void {
    this.seq++;
  }

  /** The journal's record for the code's next call, while replaying. */
  nextRecorded(): CallRecord | undefined {
    return this.replayCalls?.get(this.seq + 1)?.record;
  }

  /**
   * Numbers a call of the code; returns its number, or the error that the journal answers the
   * number with another call.
   */
  call(kind: CallRecord["kind"], name: string | undefined, args: string | undefined): number | NonDeterminismError {
    const seq = ++this.seq;
    this.lastKind = kind;
    this.lastName = name;
    this.lastSeq = seq;
    const recorded = this.replayCalls?.get(seq);
    if (recorded !== undefined) {
      const r = recorded.record;
      if (r.kind !== kind || callName(r) !== name) return this.nonDeterminism(recorded.position, describeRecord(r), this.lastCall());
      if (r.kind === "step" && r.args !== undefined && args !== undefined && r.args !== args)
        return this.argumentsDiffer(recorded.position, r.name, seq);
    }
    return seq;
  }

  /** The error for a journal whose `record` at `position` the code did not ask for; `asking` follows the code's last call. */
  mismatch(position: number, record: JournalRecord, asking: string): NonDeterminismError {
    return this.nonDeterminism(position, describeRecord(record), `${this.lastCall()} ${asking}`);
  }

  /**
   * A recorded step call answered for a call with other arguments (two calls swapped, an argument
   * computed another way) would get the result of a call it is not. A run and a replay check alike
   * stop there, as for a call of another step: the journal's fingerprint is the rule.
   */
  private argumentsDiffer(position: number, name: string, seq: number): NonDeterminismError {
    return new NonDeterminismError(
      `workflow ${this.definition.name} (ID ${this.host.workflowId}, run ${this.host.runId}) called step '${name}' (call #${seq}) with other arguments than the journal recorded at position ${position}, ` +
        `so the recorded result is that of another call. Fix: guard the changed arguments with ctx.patched(), keeping the old ones in its else branch.`,
    );
  }

  /** The code's latest call as determinism errors name it. */
  private lastCall(): string {
    const kind = this.lastKind;
    if (kind === undefined) return "nothing yet";
    return kind === "attributes" || kind === "timer"
      ? `${kind} (call #${this.lastSeq})`
      : `${kind} '${this.lastName}' (call #${this.lastSeq})`;
  }

  private nonDeterminism(position: number, holds: string, asked: string): NonDeterminismError {
    return new NonDeterminismError(
      `workflow ${this.definition.name} (ID ${this.host.workflowId}, run ${this.host.runId}) does not match its journal at position ${position}: ` +
        `the journal holds ${holds}, the code asked for ${asked}. Guard changed code paths with ctx.patched().`,
    );
  }
}
