import { RunTable } from "./run-table.js";
import { CancelledError, StorageError, TerminatedError } from "../core/errors.js";
import type { ChildResultRecord, FinishRecord, JournalRecord } from "../journal/records.js";
import type { RunEntry } from "./run-entry.js";

/** What getting children's results into their parents needs of the engine. */
export interface ChildResultsHost {
  readonly runs: RunTable;
  /** Whether another process of a cluster holds the run. */
  remote(id: string): boolean;
  closed(): boolean;
  /** Whether the run of `id` is being replaced (see `RunReplacement`), which decides what becomes of its children. */
  replacing(id: string): boolean;
  now(): number;
  append(entry: RunEntry, record: JournalRecord): Promise<void>;
  finishRecordOf(entry: RunEntry): Promise<FinishRecord>;
  /** The run's result, from whichever process holds it; throws the run's error. */
  awaitResult(id: string): Promise<unknown>;
  storageFailed(error: unknown, shard: number): void;
}

// How long a parent's owner waits before asking again for a child's result it could not get.
const RETRY_MS = 1_000;

type Outcome = Pick<ChildResultRecord, "status" | "value" | "error">;

/**
 * Journals each child's result in its parent as a `child-result` record.
 *
 * A child in the parent's process reports its result when it finishes. A child that another process
 * of a cluster holds is watched: the parent's owner asks for its result (a context request that
 * waits on the child's owner, and on the next owner if the child's shard moves). After a restart or
 * a takeover the index tells which children a parent still waits for, so a result lost to a crash
 * between the child's finish and the parent's record is delivered then.
 */
export class ChildResults {
  constructor(private readonly host: ChildResultsHost) {}

  /** A child just finished in this process: its parent here gets the result at once. */
  finished(child: RunEntry, record: FinishRecord): void {
    const link = child.parent;
    const parent = link && this.host.runs.get(link.id);
    if (link === undefined || parent === undefined || parent.finished !== undefined) return;
    // The parent's `child` record may not be durable yet when a quick child ends: the run that
    // started it decides. A run reset to an earlier step lists the children it took over.
    const open = parent.children?.get(child.id);
    if (parent.runId !== link.runId && (open === undefined || open.runId !== child.runId || open.seq !== link.seq)) return;
    this.deliver(parent, child.id, link.seq, outcomeOf(record)).catch((e: unknown) => this.host.storageFailed(e, parent.shard));
  }

  /** Watches a child that another process holds, until its result is journaled in `parent`. */
  watch(parent: RunEntry, childId: string, seq: number): void {
    const runId = parent.runId;
    const stillWaiting = (): boolean =>
      !this.host.closed() &&
      this.host.runs.get(parent.id) === parent &&
      parent.runId === runId &&
      parent.finished === undefined &&
      parent.children?.has(childId) === true;
    void this.host.awaitResult(childId).then(
      (value) => (stillWaiting() ? this.deliver(parent, childId, seq, { status: "ok", value }) : undefined),
      (error: unknown) => {
        if (!stillWaiting()) return;
        // The way to the child's owner failed, not the child: ask again.
        if (error instanceof StorageError) setTimeout(() => stillWaiting() && this.watch(parent, childId, seq), RETRY_MS).unref();
        else return this.deliver(parent, childId, seq, failureOf(error));
      },
    );
  }

  /**
   * After the runs of `shards` (or of every shard) were loaded: delivers the results of finished
   * children their parents still wait for, and watches the children other processes hold.
   */
  async reconcile(shards: ReadonlySet<number> | undefined): Promise<void> {
    for (const entry of this.host.runs.values()) {
      if (shards !== undefined && !shards.has(entry.shard)) continue;
      if (entry.finished === undefined) {
        for (const [childId, link] of entry.children ?? []) {
          if (this.host.remote(childId)) this.watch(entry, childId, link.seq);
          else await this.deliverIfFinished(entry, childId, link.seq);
        }
      } else if (entry.parent !== undefined && !this.host.remote(entry.parent.id)) {
        const parent = this.host.runs.get(entry.parent.id);
        if (parent !== undefined) await this.deliverIfFinished(parent, entry.id, entry.parent.seq);
      }
    }
  }

  /** Journals the result of a child that already finished in `parent`, which waits for it. */
  async deliverIfFinished(parent: RunEntry, childId: string, seq: number): Promise<void> {
    const child = this.host.runs.get(childId);
    const link = parent.children?.get(childId);
    if (parent.finished !== undefined || child?.finished === undefined || link === undefined || child.runId !== link.runId) return;
    await this.deliver(parent, childId, seq, outcomeOf(await this.host.finishRecordOf(child)));
  }

  private async deliver(parent: RunEntry, childId: string, seq: number, outcome: Outcome): Promise<void> {
    // A reset under way hands the results of the children its new run keeps to that run, once it is current.
    if (this.host.closed() || this.host.replacing(parent.id)) return;
    // Taken out of the index's open links now, so two reports of one child journal one result.
    parent.children?.delete(childId);
    await this.host
      .append(parent, { kind: "child-result", seq, childId, ...outcome, at: this.host.now() } as ChildResultRecord)
      .catch((e: unknown) => this.host.storageFailed(e, parent.shard));
  }
}

function outcomeOf(record: FinishRecord): Outcome {
  return record.status === "ok"
    ? { status: "ok", value: record.value }
    : { status: record.status, error: record.error ?? new Error(`the child ended ${record.status}`) };
}

/** A child's error as its owner reported it: its class tells how the child ended. */
function failureOf(error: unknown): Outcome {
  const e = error instanceof Error ? error : new Error(String(error));
  const status = e instanceof CancelledError ? "cancelled" : e instanceof TerminatedError ? "terminated" : "failed";
  return { status, error: e };
}
