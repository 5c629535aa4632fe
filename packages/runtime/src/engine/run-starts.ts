import { RunTable } from "./run-table.js";
import { randomInt } from "node:crypto";
import type { Clock } from "../core/clock.js";
import { AlreadyExistsError, CancelledError, RejectedError } from "../core/errors.js";
import { shardOf } from "../core/ids.js";
import type { StartRecord } from "../journal/records.js";
import { CURRENT_FLAGS } from "../journal/run-flags.js";
import type { StartOptions } from "../client/types.js";
import type { WorkflowDefinition } from "../workflow/registry.js";
import type { RunCache } from "./run-cache.js";
import { RunEntry } from "./run-entry.js";
import type { RunRecords } from "./run-records.js";
import type { ParentLink } from "./run-service.js";
import type { WorkflowCatalog } from "./workflow-catalog.js";

/** What starting runs needs of the runs around them. */
export interface RunStartsDeps {
  readonly runs: RunTable;
  readonly records: RunRecords;
  readonly cache: RunCache;
  readonly catalog: WorkflowCatalog;
  readonly clock: Clock;
  readonly shardCount: number;
  /** Ends the running run of `id` (idPolicy `terminate-existing`). */
  terminate(id: string, reason: string): Promise<void>;
  /** The ID has a run now: whoever waits for it to start goes on. */
  started(id: string): void;
  /** The caller's trace context, journaled with a start that names none. */
  currentTrace?(): string | undefined;
}

/** Where a run comes from, as its start record says. */
export type Lineage = Pick<StartRecord, "from" | "parent" | "request" | "signal" | "trace" | "carried">;

/**
 * New runs of a workflow ID: a start (under the ID's policy), a child's start, and the next run of
 * a continue-as-new (see `RunReplacement`).
 */
export class RunStarts {
  constructor(private readonly deps: RunStartsDeps) {}

  /**
   * Starts a new run of `id`, subject to its ID policy; resolves once its start record is durable.
   * "existing" when the policy keeps the running run, or when the same call of the same parent run
   * started this child before a crash lost the parent's record of it.
   */
  async begin(
    def: WorkflowDefinition,
    id: string,
    input: unknown,
    options: StartOptions,
    update: StartRecord["update"],
    lineage: Lineage = {},
  ): Promise<"started" | "existing"> {
    const { runs, records, cache, clock } = this.deps;
    // Checked without awaiting when nothing is dropped: a start yields only when it must.
    const retiring = runs.retiring(id);
    if (retiring !== undefined) await retiring.catch(() => undefined);
    let existing = runs.get(id);
    // The same call of the same parent run started this child before (a crash lost the parent's
    // record of it); a child continuing as new carries its parent's link on, and is a new run.
    if (existing !== undefined && lineage.from === undefined && lineage.parent !== undefined && sameLink(existing.parent, lineage.parent))
      return this.durable(existing);
    if (existing !== undefined && lineage.from === undefined) {
      const policy = options.idPolicy ?? {};
      const running = policy.running ?? "fail";
      const finished = policy.finished ?? "allow";
      checkPolicy(running, ["fail", "use-existing", "terminate-existing"], "idPolicy.running");
      checkPolicy(finished, ["allow", "allow-if-failed", "refuse"], "idPolicy.finished");
      if (existing.finished === undefined) {
        if (running === "use-existing") return this.durable(existing);
        if (running === "fail")
          throw new AlreadyExistsError(`workflow ID '${id}' already has a running run (${existing.type} run ${existing.runId})`);
        await this.deps.terminate(id, "replaced by a new run (idPolicy terminate-existing)");
        existing = runs.get(id);
      } else if (finished === "refuse" || (finished === "allow-if-failed" && existing?.finished === "ok")) {
        throw new AlreadyExistsError(
          `workflow ID '${id}' already had a run (${existing.type} run ${existing.runId}, ${existing.finished}) and idPolicy.finished is '${finished}'`,
        );
      }
    }
    const runId = (existing?.runId ?? 0) + 1;
    const trace = lineage.trace ?? this.deps.currentTrace?.();
    const record: StartRecord = {
      kind: "start",
      at: clock.now(),
      type: def.name,
      runId,
      seed: randomInt(0, 2 ** 32 - 1),
      input,
      ...(update ? { update } : {}),
      ...lineage,
      ...(options.attributes !== undefined ? { attributes: { ...options.attributes } } : {}),
      ...(trace === undefined ? {} : { trace }),
      flags: CURRENT_FLAGS,
    };
    const body = records.encode(id, runId, 0, record);
    // Everything below runs without yielding until the append is queued, so two starts of one ID
    // cannot both pass the checks above.
    if (runs.get(id) !== existing) throw new AlreadyExistsError(`workflow ID '${id}' was started concurrently`);
    const entry = existing ?? new RunEntry(id, shardOf(id, this.deps.shardCount));
    const previous = existing?.stream;
    if (existing !== undefined) {
      const replaced = existing;
      cache.evict(replaced, () => new CancelledError(`run ${replaced.runId} of '${id}' was replaced by run ${runId}; its steps stop`));
    }
    entry.reset(def.name, runId, record.at);
    if (lineage.parent !== undefined) entry.parent = lineage.parent;
    if (record.attributes !== undefined) entry.attributes = { ...record.attributes };
    if (trace !== undefined) entry.trace = trace;
    runs.set(id, entry);
    cache.create(entry, def).load([]);
    this.deps.started(id);
    await records.appendEncoded(entry, record, body);
    if (previous !== undefined) records.drop(entry.shard, previous);
    return "started";
  }

  /**
   * "existing", once every record of the run that is there is durable: its own start may still be
   * on its way to the log (a concurrent start), and a call that uses the run is acknowledged only
   * if the run survives a crash. A failed append fails this call too.
   */
  private async durable(existing: RunEntry): Promise<"existing"> {
    await this.deps.records.settled(existing);
    return "existing";
  }
}

function sameLink(a: RunEntry["parent"], b: ParentLink): boolean {
  return a !== undefined && a.id === b.id && a.runId === b.runId && a.seq === b.seq;
}

function checkPolicy(value: string, allowed: readonly string[], what: string): void {
  if (!allowed.includes(value))
    throw new RejectedError(`${what} must be one of ${allowed.map((a) => `'${a}'`).join(", ")}; got '${value}'`);
}
