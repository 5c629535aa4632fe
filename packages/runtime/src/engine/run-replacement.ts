import type { Clock } from "../core/clock.js";
import { CancelledError, FuseeError, NotFoundError, RejectedError } from "../core/errors.js";
import { performedBy, remembered } from "../journal/carried.js";
import type { Carried, CarriedMessage, JournalRecord, StartRecord } from "../journal/records.js";
import type { RunExecutor } from "../workflow/run-executor.js";
import type { WorkflowDefinition } from "../workflow/registry.js";
import type { RunCache } from "./run-cache.js";
import type { RunEntry } from "./run-entry.js";
import type { RunRecords } from "./run-records.js";
import type { Lineage } from "./run-starts.js";
import type { WorkflowCatalog } from "./workflow-catalog.js";

/** What replacing a run by the next run of its ID needs of the runs around it. */
export interface RunReplacementDeps {
  readonly records: RunRecords;
  readonly cache: RunCache;
  readonly catalog: WorkflowCatalog;
  readonly clock: Clock;
  /** How long the request and update IDs a replaced run performed are remembered by the runs after it. */
  readonly idempotencyWindowMs: number;
  /** Starts the ID's next run (see `RunStarts.begin`); resolves once its start is durable. */
  begin(
    def: WorkflowDefinition,
    id: string,
    input: unknown,
    attributes: Record<string, unknown> | undefined,
    lineage: Lineage,
  ): Promise<unknown>;
  /** Applies the close policy of child `childId` of the entry's current run, and forgets the child. */
  closeChild(entry: RunEntry, childId: string, reason: string): Promise<void>;
  /** After a reset: the children the new run kept report to it (a result that came meanwhile is delivered). */
  keepChildren(entry: RunEntry): Promise<void>;
  /** The replaced run could not be continued: it ends failed with `error`. */
  failed(entry: RunEntry, runId: number, error: Error): void;
}

/**
 * Replacing a run by the next run of its ID, continue-as-new and reset, while calls on the ID keep
 * arriving: nothing acknowledged to the replaced run may be lost or applied twice.
 *
 * While a replacement is under way, calls that change the ID's run (signals, updates, cancels,
 * terminations, completions, messages, children's results) wait for it (`busy`, `settled`) and then
 * go to the new run. The replacement first lets every record already appended become durable and
 * reach the run, so what it reads is the whole journal; children the new run does not take over are
 * closed by their policies before it starts, so it can start children of the same IDs.
 */
export class RunReplacement {
  /** Replacements under way, by workflow ID. */
  private readonly under = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: RunReplacementDeps) {}

  /** Whether a replacement of the run of `id` is under way. */
  busy(id: string): boolean {
    return this.under.size !== 0 && this.under.has(id);
  }

  /** Resolves once no replacement of the run of `id` is under way. */
  async settled(id: string): Promise<void> {
    for (let p = this.under.get(id); p !== undefined; p = this.under.get(id)) await p.then(ignore, ignore);
  }

  /**
   * The code of the entry's run `runId` continued as new: once every record sent to the run is
   * durable and applied, its children are closed and the next run starts with what it hands on
   * (the messages its code did not see, the requests and update outcomes it performed) and its
   * search attributes, unless `attributes` replaces them.
   */
  continueAsNew(
    entry: RunEntry,
    runId: number,
    def: WorkflowDefinition,
    input: unknown,
    attributes: Readonly<Record<string, unknown>> | undefined,
    executor: RunExecutor,
  ): void {
    const current = (): boolean => entry.runId === runId && entry.finished === undefined && entry.executor === executor;
    this.exclusive(entry.id, async () => {
      await this.deps.records.settled(entry);
      if (!current()) return;
      await executor.whenIdle();
      if (!current()) return;
      for (const childId of [...(entry.children?.keys() ?? [])])
        await this.deps.closeChild(entry, childId, `its parent '${entry.id}' continued as new`);
      if (!current()) return;
      const carried = executor.handOn(this.deps.clock.now(), this.deps.idempotencyWindowMs);
      const lineage: Lineage = {
        from: { runId, reason: "continue-as-new" },
        ...(entry.parent ? { parent: entry.parent } : {}),
        ...(entry.trace ? { trace: entry.trace } : {}),
        ...(isEmpty(carried) ? {} : { carried }),
      };
      const next = attributes ?? entry.attributes;
      // Calls held meanwhile go to the new run once its start is durable and its code has begun.
      await this.deps.begin(def, entry.id, input, next === undefined ? undefined : { ...next }, lineage);
    }).catch((e: unknown) => this.deps.failed(entry, runId, asError(e)));
  }

  /**
   * Re-runs the entry's run from its first step named `stepName`, as its ID's next run: the journal
   * up to that step is copied (steps before it are answered from it), and the signals, updates and
   * (when the run had not finished) cancellation received after it are delivered again. Children
   * started after that step are closed by their policies; those started before report to the new run.
   */
  reset(entry: RunEntry, stepName: string, request: string | undefined): Promise<void> {
    return this.exclusive(entry.id, async () => {
      const { records, cache, clock } = this.deps;
      await records.settled(entry);
      const id = entry.id;
      const def = this.deps.catalog.get(entry.type);
      if (def === undefined) throw new NotFoundError(`workflow type '${entry.type}' of run '${id}' is not registered`);
      const journal = await records.read(entry);
      const at = journal.findIndex((r) => r.kind === "step" && r.name === stepName);
      if (at < 0) {
        const names = [...new Set(journal.flatMap((r) => (r.kind === "step" ? [`'${r.name}'`] : [])))].join(", ") || "none";
        throw new RejectedError(`run ${entry.runId} of ${id} has no step '${stepName}' to reset to; its steps are ${names}`, {
          reason: "unknown-step",
        });
      }
      const old = journal[0] as StartRecord;
      const finished = entry.finished !== undefined;
      const again = journal.slice(at).filter((r): r is CarriedMessage => isMessage(r) && (r.kind !== "cancel" || !finished));
      const runId = entry.runId + 1;
      const now = clock.now();
      const notCopied = journal.slice(at).filter((r) => !again.includes(r as CarriedMessage));
      const carried = resetCarried(old, notCopied, now, this.deps.idempotencyWindowMs);
      const { request: _startedBy, carried: _carried, ...start } = old;
      const copied = [...journal.slice(1, at), ...again];
      const copy: JournalRecord[] = [
        {
          ...start,
          runId,
          at: now,
          from: { runId: entry.runId, reason: "reset" },
          // Said in the start, so recovery takes a copy that a power loss cut short for no new run at all.
          copied: copied.length,
          ...(request === undefined ? {} : { request }),
          ...(isEmpty(carried) ? {} : { carried }),
        },
        ...copied,
      ];
      // Encoded first: a record too large refuses the reset before anything changed.
      const bodies = copy.map((r, position) => records.encode(id, runId, position, r));
      const keptCalls = new Set(journal.slice(0, at).flatMap((r) => (r.kind === "child" ? [r.seq] : [])));
      // The run's code stops before its children are closed, so it starts no other meanwhile.
      cache.evict(entry, () => new CancelledError(`run ${entry.runId} of '${id}' was reset to step '${stepName}'; its steps stop`));
      for (const [childId, link] of [...(entry.children ?? [])])
        if (!keptCalls.has(link.seq)) await this.deps.closeChild(entry, childId, `its parent '${id}' was reset to step '${stepName}'`);
      const previous = entry.stream;
      const { parent, trace } = entry;
      entry.reset(def.name, runId, now);
      if (parent !== undefined) entry.parent = parent;
      if (trace !== undefined) entry.trace = trace;
      await Promise.all(copy.map((r, i) => records.appendEncoded(entry, r, bodies[i] as Uint8Array)));
      records.drop(entry.shard, previous);
      await this.deps.keepChildren(entry);
      return entry;
    }).then(async (entry) => {
      // Loaded once the reset is over, so the new run's code runs after its discarded children were closed.
      if (entry.executor === undefined && entry.finished === undefined) await this.deps.cache.load(entry);
    });
  }

  /** Runs `body` as the replacement of the run of `id`, once any earlier one is over. */
  private async exclusive<T>(id: string, body: () => Promise<T>): Promise<T> {
    // Checked again after each wait, with nothing awaited between the check and the claim: two
    // callers that waited out the same replacement would otherwise both go on at once.
    while (this.under.has(id)) await this.settled(id);
    const done = body();
    this.under.set(id, done);
    try {
      return await done;
    } finally {
      if (this.under.get(id) === done) this.under.delete(id);
    }
  }
}

/**
 * What a reset's new start carries: the messages the old start carried (applied again, as the run
 * is), and the old run's requests and update outcomes that the copy does not hold: the old start's
 * own request and what it remembered, and the requests of records after the reset point.
 */
function resetCarried(old: StartRecord, notCopied: readonly JournalRecord[], now: number, windowMs: number): Carried {
  const own: (readonly [string, number])[] = old.request === undefined ? [] : [[old.request, old.at]];
  const requests = remembered([...own, ...(old.carried?.requests ?? []), ...notCopied.flatMap((r) => performedBy(r))], now, windowMs);
  const updates = remembered(old.carried?.updates ?? [], now, windowMs);
  return {
    ...(old.carried?.messages !== undefined ? { messages: old.carried.messages } : {}),
    ...(requests.length > 0 ? { requests } : {}),
    ...(updates.length > 0 ? { updates } : {}),
  };
}

function isMessage(r: JournalRecord): boolean {
  return r.kind === "signal" || r.kind === "update" || r.kind === "cancel";
}

function isEmpty(carried: Carried): boolean {
  return carried.messages === undefined && carried.requests === undefined && carried.updates === undefined;
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new FuseeError(String(e));
}

function ignore(): void {}
