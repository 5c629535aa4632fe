import { RunTable } from "./run-table.js";
import { FuseeError, RejectedError } from "../core/errors.js";
import { checkWorkflowId } from "../core/ids.js";
import type { ChildRecord, FinishRecord } from "../journal/records.js";
import type { WorkflowDefinition } from "../workflow/registry.js";
import type { ChildRequest } from "../workflow/run-executor.js";
import { ChildResults } from "./child-results.js";
import type { ChildLink, RunEntry } from "./run-entry.js";
import type { RunRecords } from "./run-records.js";
import type { ParentLink, RequestContext, RunService } from "./run-service.js";

/** What starting and closing children needs of the runs around them. */
export interface ChildRunsDeps {
  readonly runs: RunTable;
  readonly records: RunRecords;
  now(): number;
  closed(): boolean;
  /** Whether the run of `id` is being replaced (continue-as-new, reset). */
  replacing(id: string): boolean;
  /** Whether this process holds the run's shard. */
  local(id: string): boolean;
  /** Where calls on runs of other shards go. */
  router(): RunService;
  /** Terminates or asks to cancel a run held here, once per request. */
  closeHere(id: string, close: "terminate" | "request-cancel", reason: string, context: RequestContext): Promise<void>;
  /** Starts a child held here; "existing" when this parent call started it before (a crash lost the parent's record of it). */
  begin(
    def: WorkflowDefinition,
    id: string,
    input: unknown,
    parent: ParentLink,
    request: string | undefined,
  ): Promise<"started" | "existing">;
  resolve(type: string): WorkflowDefinition;
  failed(error: unknown, shard: number): void;
}

/**
 * Child runs from their parents' side: starting the child a call asks for and journaling the
 * outcome in the parent, delivering each child's result to its parent once, and applying a
 * parent's close policy when it ends (also after a crash cut that short).
 */
export class ChildRuns {
  private readonly results: ChildResults;

  constructor(private readonly deps: ChildRunsDeps) {
    this.results = new ChildResults({
      runs: deps.runs,
      remote: (id) => !deps.local(id),
      closed: deps.closed,
      replacing: deps.replacing,
      now: deps.now,
      append: (entry, record) => deps.records.append(entry, record),
      finishRecordOf: (entry) => deps.records.finishRecordOf(entry),
      awaitResult: (id) => deps.router().awaitResult(id),
      storageFailed: (e, shard) => this.appendFailed(e, shard),
    });
  }

  /** Starts the child a parent's call asked for and journals the outcome in the parent. */
  async start(parent: RunEntry, request: ChildRequest): Promise<void> {
    const runId = parent.runId;
    const base = { kind: "child" as const, seq: request.seq, childId: request.id, at: 0 };
    let outcome: ChildRecord;
    let startedBefore = false;
    const local = this.deps.local(request.id);
    try {
      const def = this.deps.resolve(request.type);
      checkWorkflowId(request.id, "child workflow ID");
      const link = { id: parent.id, runId, seq: request.seq, close: request.close };
      let childRunId: number;
      if (!local) childRunId = await this.deps.router().startChild(def.name, request.id, request.input, link);
      else {
        startedBefore = (await this.deps.begin(def, request.id, request.input, link, undefined)) === "existing";
        childRunId = (this.deps.runs.get(request.id) as RunEntry).runId;
      }
      outcome = { ...base, ok: true, childRunId, close: request.close, at: this.deps.now() };
    } catch (e) {
      outcome = { ...base, ok: false, error: e instanceof Error ? e : new FuseeError(String(e)), at: this.deps.now() };
    }
    if (this.deps.closed()) return;
    if (parent.runId !== runId || parent.finished !== undefined) {
      // The run that asked for the child ended or was replaced while it started: no run owns the child now.
      if (outcome.ok)
        await this.closeLink(
          request.id,
          outcome.childRunId ?? 0,
          { id: parent.id, runId, seq: request.seq },
          request.close,
          `its parent run ${runId} of '${parent.id}' is over`,
        );
      return;
    }
    // A run that finished meanwhile refuses the record: its end found no child to close.
    let refused = false;
    await this.deps.records.append(parent, outcome).catch((e: unknown) => {
      refused = e instanceof RejectedError;
      this.appendFailed(e, parent.shard);
    });
    if (outcome.ok && (refused || parent.runId !== runId) && !this.deps.closed()) {
      await this.closeLink(
        request.id,
        outcome.childRunId ?? 0,
        { id: parent.id, runId, seq: request.seq },
        request.close,
        `its parent run ${runId} of '${parent.id}' ended while the child started`,
      );
      return;
    }
    if (!outcome.ok || this.deps.runs.get(parent.id) !== parent) return;
    if (!local) this.results.watch(parent, request.id, request.seq);
    // A child that finished before the crash reports to no one now: its result is delivered here, once.
    else if (startedBefore && parent.executor?.hasChildResult(request.seq) !== true)
      await this.results.deliverIfFinished(parent, request.id, request.seq);
  }

  /** Applies a child's close policy: terminate it, ask it to cancel, or leave it running. */
  async close(parent: RunEntry, childId: string, reason: string): Promise<void> {
    const link = parent.children?.get(childId);
    parent.children?.delete(childId);
    if (link !== undefined)
      await this.closeLink(childId, link.runId, { id: parent.id, runId: parent.runId, seq: link.seq }, link.close, reason);
  }

  /**
   * After a reset: the children the new run took over (started before the step it was reset to)
   * report to it. Their results may have come while the reset was under way: those are delivered now.
   */
  async adopt(parent: RunEntry): Promise<void> {
    for (const [childId, link] of [...(parent.children ?? [])]) {
      if (!this.deps.local(childId)) this.results.watch(parent, childId, link.seq);
      else await this.results.deliverIfFinished(parent, childId, link.seq);
    }
  }

  /**
   * Applies close policy `close` to run `runId` of child `childId`, or to the run that took its
   * place still as the child of the same parent call (the child was reset or continued as new),
   * unless that run ended or another run of the ID, not this parent's, replaced it.
   */
  private async closeLink(childId: string, runId: number, parent: ParentCall, close: ChildLink["close"], reason: string): Promise<void> {
    if (close === "abandon" || this.deps.closed()) return;
    // A child another process holds is closed there; one that ended meanwhile refuses (RejectedError).
    const child = this.deps.runs.get(childId);
    // The call, not the run: a reset's new run keeps the children started before its step, and
    // closes them as its own, though their link names the run that started them.
    const ours = child !== undefined && (child.runId === runId || sameCall(child.parent, parent));
    if (this.deps.local(childId) && (child === undefined || !ours || child.finished !== undefined)) return;
    // One request per parent call: a close applied again after a crash (recovery cannot tell whether
    // it was durable), or by the run a reset made for a child the replaced run's link still names,
    // is found performed, so a child that caught the cancellation is not asked twice.
    try {
      if (this.deps.local(childId)) await this.deps.closeHere(childId, close, reason, { request: closeRequest(parent) });
      else if (close === "terminate") await this.deps.router().terminate(childId, reason);
      // Under the same request as a close here: whichever process applies the policy again finds it performed.
      else await this.deps.router().deliver(childId, { op: "cancel", reason }, closeRequest(parent));
    } catch (e) {
      if (child !== undefined) this.appendFailed(e, child.shard);
    }
  }

  /** A run ended: its parent gets its result, and its own children their close policies. */
  parentEnded(entry: RunEntry, record: FinishRecord): void {
    this.results.finished(entry, record);
    for (const childId of [...(entry.children?.keys() ?? [])]) {
      this.close(entry, childId, `parent '${entry.id}' ended (${record.status})`).catch((e: unknown) => this.appendFailed(e, entry.shard));
    }
  }

  /**
   * After the runs of `shards` (or of every shard) were loaded: results of finished children go to
   * their waiting parents, and parents that ended before a crash could close their children do now.
   */
  async reconcile(shards: ReadonlySet<number> | undefined): Promise<void> {
    await this.results.reconcile(shards);
    for (const entry of this.deps.runs.values()) {
      if (shards !== undefined && !shards.has(entry.shard)) continue;
      this.closeIfOrphaned(entry);
      if (entry.finished === undefined || entry.children === undefined) continue;
      for (const childId of [...entry.children.keys()])
        this.close(entry, childId, `parent '${entry.id}' ended (${entry.finished})`).catch((e: unknown) =>
          this.appendFailed(e, entry.shard),
        );
    }
  }

  /**
   * A running child whose parent run a later run of the parent's ID replaced (a new start, a
   * continue-as-new, a reset that did not keep it): the replaced run's index entry, which listed it,
   * is gone, and a crash may have cut its close short. Or its parent run ended while the child
   * started, before journaling it: the parent's entry does not list it. The child's own link says the policy.
   */
  private closeIfOrphaned(child: RunEntry): void {
    const link = child.parent;
    if (link?.close === undefined || link.close === "abandon" || child.finished !== undefined || !this.deps.local(link.id)) return;
    const parent = this.deps.runs.get(link.id);
    if (parent === undefined || parent.runId < link.runId) return;
    if (parent.runId === link.runId && parent.finished === undefined) return;
    // A reset keeps the children started before its step: they report to the new run, which lists
    // them by the call that started them, also once they continued as new. An ended run that lists
    // the child closes it itself (see `reconcile`); one that closed it already did so under the
    // request used here, so the close below is found performed.
    if (parent.children?.get(child.id)?.seq === link.seq) return;
    const reason =
      parent.runId === link.runId
        ? `run ${link.runId} of its parent '${link.id}' ended`
        : `run ${link.runId} of its parent '${link.id}' was replaced`;
    this.closeLink(child.id, child.runId, link, link.close, reason).catch((e: unknown) => this.appendFailed(e, child.shard));
  }

  /** A record the engine appended on its own failed: a run that finished meanwhile refuses it, which is no failure. */
  private appendFailed(e: unknown, shard: number): void {
    if (!(e instanceof RejectedError)) this.deps.failed(e, shard);
  }
}

/** A parent's call that started a child, as one of the parent's runs makes it (a reset keeps `seq`). */
interface ParentCall {
  readonly id: string;
  readonly runId: number;
  readonly seq: number;
}

/** Whether a child's link names the call `call` of a parent run, or of a run that `call`'s reset replaced. */
function sameCall(link: ParentLink | undefined, call: ParentCall): boolean {
  return link !== undefined && link.id === call.id && link.seq === call.seq && link.runId <= call.runId;
}

/**
 * The request ID under which a parent's close policy acts on the child its call `seq` started: the
 * same for the run that started the child and for the runs resets made that kept it.
 */
function closeRequest(parent: ParentCall): string {
  return `close:${parent.id}:${parent.seq}`;
}
