import type { Mutant } from "./mutant.js";

/**
 * The deliberate bugs `npm run sim:mutants` plants, one at a time, each of a kind a durable engine
 * must not have. A patch is an exact search-and-replace, so it stops applying (and the catalogue's
 * test fails) as soon as the code it names changes, instead of silently planting nothing.
 */
export const MUTANTS: readonly Mutant[] = [
  {
    name: "start-acked-before-durable",
    kind: "ack before durable: a start answers before its record is synced",
    file: "engine/run-starts.ts",
    search: "    await records.appendEncoded(entry, record, body);\n",
    replace: "    void records.appendEncoded(entry, record, body).catch(() => undefined);\n",
  },
  {
    name: "sync-skipped",
    kind: "ack before durable: a batch is acknowledged after its write, without its fdatasync",
    file: "storage/group-commit.ts",
    search:
      "        if (this.syncKind === SyncKind.Data || this.syncKind === SyncKind.Full) {\n          this.stage = SYNC;\n          this.target.layer.sync(",
    replace:
      "        if ((this.syncKind as SyncKind) === SyncKind.Full) {\n          this.stage = SYNC;\n          this.target.layer.sync(",
  },
  {
    name: "fsync-error-ignored",
    kind: "fsync error ignored: a failed sync is taken for a good one",
    file: "storage/group-commit.ts",
    search: "          this.target.layer.sync(seg.fd, this.syncKind === SyncKind.Data);\n",
    replace:
      "          try {\n            this.target.layer.sync(seg.fd, this.syncKind === SyncKind.Data);\n          } catch {\n            // ignored\n          }\n",
  },
  {
    name: "recovery-drops-record",
    kind: "a record dropped on recovery: the last record of a batch of several is not indexed",
    file: "storage/segment-scan.ts",
    search:
      "        if (o >= 0) {\n          index.add(keys[i]!, position(seq, o));\n          visitor.entry(shard, keys[i]!, buf.subarray(starts[i], ends[i]));\n        } else {",
    replace:
      "        if (o >= 0) {\n          if (i > 0 && i === count - 1) continue;\n          index.add(keys[i]!, position(seq, o));\n          visitor.entry(shard, keys[i]!, buf.subarray(starts[i], ends[i]));\n        } else {",
  },
  {
    name: "cancel-lost-on-replay",
    kind: "a cancelled run resumed: a replay skips the cancel record",
    file: "workflow/features/cancellation.ts",
    search: "  cancel: (run, record, replayed) => run.cancellation.apply(record, replayed),",
    replace: "  cancel: (run, record, replayed) => (replayed ? undefined : run.cancellation.apply(record, replayed)),",
  },
  {
    name: "signal-twice-on-replay",
    kind: "a signal applied twice on replay",
    file: "workflow/features/signals.ts",
    search: "  signal: (run, record) => run.signals.apply(record.name, record.value, record.at),",
    replace:
      "  signal: (run, record, replayed) => {\n    run.signals.apply(record.name, record.value, record.at);\n    if (replayed) run.signals.apply(record.name, record.value, record.at);\n  },",
  },
  {
    name: "failed-attempt-not-journaled",
    kind: "a failed attempt not journaled: the retry starts without its record",
    file: "workflow/step-runner.ts",
    search: "      this.env.attemptFailed(this.seq, this.name, attempt, outcome, retryAt, this.since, () => this.retryAt(retryAt));\n",
    replace: "      this.retryAt(retryAt);\n",
  },
  {
    name: "retry-budget-off-by-one",
    kind: "retry budget off by one: a policy of n attempts runs n + 1",
    file: "workflow/retry-policy.ts",
    search: "    if (attempt >= this.maxAttempts) return undefined;",
    replace: "    if (attempt > this.maxAttempts) return undefined;",
  },
  {
    name: "abort-not-told",
    kind: "a cancelled step not told: its AbortSignal never fires",
    file: "workflow/step-runner.ts",
    search: "    if (this.running) return this.scope?.abort(reason);",
    replace: "    if (this.running) return;",
  },
  {
    name: "timer-fires-early",
    kind: "timer fired early: a timer is armed one tick (10 ms) before it is due",
    file: "workflow/features/timers.ts",
    search: 'run.record({ kind: "timer", seq, until, at: run.host.clock.now() })',
    replace: 'run.record({ kind: "timer", seq, until: until - 10, at: run.host.clock.now() })',
  },
  {
    name: "step-key-collision",
    kind: "step key collision: keys name the workflow ID and start time, not the run",
    file: "workflow/features/lifecycle.ts",
    search: "      ? `${run.workflowId}:${run.host.runId}.${start.at.toString(36)}`",
    replace: "      ? `${run.workflowId}:${start.at.toString(36)}`",
  },
  {
    name: "child-result-to-wrong-run",
    kind: "a child's result to the wrong run: delivered to whichever run of its parent's ID is current",
    file: "engine/child-results.ts",
    search: "    if (parent.runId !== link.runId && (open === undefined || open.runId !== child.runId || open.seq !== link.seq)) return;\n",
    replace: "",
  },
  {
    name: "close-policy-skipped-on-end",
    kind: "a close policy skipped: a parent's end leaves its children running",
    file: "engine/child-runs.ts",
    search:
      "      this.close(entry, childId, `parent '${entry.id}' ended (${record.status})`).catch((e: unknown) => this.appendFailed(e, entry.shard));",
    replace: "      void childId;",
  },
  {
    name: "request-cancel-terminates",
    kind: "a close policy misapplied: request-cancel terminates the child",
    file: "engine/local-run-parts.ts",
    search: '        close === "terminate" ? calls.terminate(id, reason, context) : calls.cancel(id, reason, context),',
    replace:
      '        close === "terminate" || close === "request-cancel" ? calls.terminate(id, reason, context) : calls.cancel(id, reason, context),',
  },
  {
    name: "id-policy-inverted",
    kind: "an ID policy inverted: allow-if-failed refuses after a failure and allows after success",
    file: "engine/run-starts.ts",
    search: '(finished === "allow-if-failed" && existing?.finished === "ok")',
    replace: '(finished === "allow-if-failed" && existing?.finished !== "ok")',
  },
  {
    name: "update-validator-skipped",
    kind: "a rejected update journaled: the validator is not run",
    file: "workflow/run-executor.ts",
    search: "    this.updates.validate(name, arg);\n",
    replace: "    if (arg === undefined) this.updates.validate(name, arg);\n",
  },
  {
    name: "checksum-ignored",
    kind: "a torn write taken for a record: recovery skips the frame checksum",
    file: "storage/frame.ts",
    search: '  if (crc32c(buf, bodyStart, end) !== sum) return fail(view, "checksum");\n',
    replace: "",
  },
  {
    name: "timers-lost-on-recovery",
    kind: "a record dropped on recovery: the timers of recovered runs are not armed",
    file: "engine/run-recovery.ts",
    search: "    armTimer: (until, entry, seq) => this.timers.push(until, entry, seq, entry.runId),",
    replace: "    armTimer: () => undefined,",
  },
  {
    name: "update-dedup-current-run-only",
    kind: "a message deduplicated only against the current run: update IDs are not carried across continue-as-new",
    file: "workflow/features/updates.ts",
    search: "    for (const u of carried) {\n      this.accepted.add(u.id);",
    replace: "    for (const u of carried.slice(carried.length)) {\n      this.accepted.add(u.id);",
  },
  {
    name: "request-dedup-current-run-only",
    kind: "a message deduplicated only against the current run: requests performed by replaced runs are forgotten",
    file: "journal/carried.ts",
    search: "  for (const [request] of carried?.requests ?? []) out.push(request);\n",
    replace: "",
  },
  {
    name: "close-policy-skipped-on-continue-as-new",
    kind: "a close policy skipped on continue-as-new: the children of the replaced run keep running",
    file: "engine/run-replacement.ts",
    search:
      "      for (const childId of [...(entry.children?.keys() ?? [])])\n        await this.deps.closeChild(entry, childId, `its parent '${entry.id}' continued as new`);\n",
    replace: "",
  },
  {
    name: "attributes-lost-on-continue-as-new",
    kind: "state dropped on continue-as-new: the next run starts without the search attributes of the last",
    file: "engine/run-replacement.ts",
    search: "      const next = attributes ?? entry.attributes;\n",
    replace: "      const next = attributes;\n",
  },
  {
    name: "reset-keeps-discarded-children",
    kind: "a close policy skipped on reset: children started after the reset step keep running",
    file: "engine/run-replacement.ts",
    search: "        if (!keptCalls.has(link.seq)) await this.deps.closeChild(",
    replace: "        if (keptCalls.has(-1 - link.seq)) await this.deps.closeChild(",
  },
  {
    name: "orphaned-child-left-after-recovery",
    kind: "a close policy lost to a power loss: recovery leaves running the child of a run a new start replaced",
    file: "engine/child-runs.ts",
    search: "      this.closeIfOrphaned(entry);\n",
    replace: "",
  },
  {
    name: "close-asked-again-on-open",
    kind: "a close policy applied twice: each opening of the engine asks the child of an ended parent to cancel again",
    file: "engine/local-run-parts.ts",
    search: ": calls.cancel(id, reason, context),",
    replace: ": calls.cancel(id, reason),",
  },
  {
    name: "lease-checked-after-write",
    kind: "a lease checked after the write: a batch is inserted whether or not the shard's lease still holds",
    file: "storage/postgres/group-insert.ts",
    search: "text: `WITH ${lease} INSERT INTO ${t.batches} (shard, seq, streams, ends, body) SELECT $1, $4, $5, $6, $7 FROM lease`,",
    replace:
      "text: `WITH ${lease}, written AS (INSERT INTO ${t.batches} (shard, seq, streams, ends, body) VALUES ($1, $4, $5, $6, $7)) SELECT 1 FROM lease`,",
  },
];
