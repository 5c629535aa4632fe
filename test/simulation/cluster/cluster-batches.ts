/*
 * Batched events across processes: events of one batch key (`engine.batch`) sent through processes
 * that do not hold the key's shard, so each is forwarded to its owner, which may be SIGKILLed under
 * them. Each event is asked again until it is answered, as a careful client does: with its event ID
 * (taken once, whatever the attempts), or without one, when a later attempt is a new event and an
 * earlier one may have been taken too. Events go one after the other, so no batch of the key fires
 * while an event's attempts go on but the one it joined: a retried event ID always finds its batch.
 */
import { sleep } from "./cluster-processes.js";
import { askAnyLive, RETRY_GAP_MS, RETRY_MS, type ScheduleRun } from "./cluster-calls.js";
import type { BatchAction } from "./cluster-schedule.js";
import { flowHolder } from "./cluster-schedules.js";
import type { EngineHandle } from "./engine-handle.js";

/** How long the checks wait for a batch run's result: its batch may fire only once a takeover settles. */
const RESULT_MS = 20_000;
const ASK_MS = 2_000;

/** What the harness sent of one event and what it was answered. */
interface SentEvent {
  readonly tag: string;
  readonly withId: boolean;
  attempts: number;
  /** The run ID of the batch the acknowledged attempt joined; undefined while the event is in doubt. */
  runId: string | undefined;
}

export class Batches {
  private readonly sent: { readonly a: BatchAction; readonly events: SentEvent[] }[] = [];

  constructor(private readonly run: ScheduleRun) {}

  /** Sends the action's events one after the other, each asked again until it is answered. */
  async batch(a: BatchAction): Promise<void> {
    const events: SentEvent[] = [];
    this.sent.push({ a, events });
    let strike: Promise<void> = Promise.resolve();
    for (const [i, e] of a.events.entries()) {
      await sleep(e.afterMs);
      const event: SentEvent = { tag: e.tag, withId: e.withId, attempts: 0, runId: undefined };
      events.push(event);
      const deadline = Date.now() + RETRY_MS;
      for (;;) {
        const { caller, owner } = await this.route(a, event.attempts);
        if (i === 0 && event.attempts === 0) strike = this.killOwner(a, owner, caller);
        event.attempts++;
        const again = event.attempts > 1 ? ` (attempt ${event.attempts})` : "";
        const what = `batch ${a.key} ${e.tag}${e.withId ? " with its event ID" : ""}`;
        try {
          event.runId = await caller.send<string>({
            op: "batch",
            key: a.key,
            tag: e.tag,
            ...(e.withId ? { eventId: `id-${e.tag}` } : {}),
            size: a.size,
            timeoutMs: a.timeoutMs,
          });
          this.run.outcome(what, true, `in ${event.runId} through ${caller.owner}${again}`);
          break;
        } catch (err) {
          if (Date.now() > deadline) {
            this.run.outcome(what, false, `through ${caller.owner}: ${String(err)}`);
            break;
          }
          this.run.note(`  ${what} through ${caller.owner}: ${String(err)}; asked again`);
          await sleep(RETRY_GAP_MS);
        }
      }
    }
    await strike;
  }

  /**
   * Once every call settled: the runs the key's batches started hold each acknowledged event once
   * (several times only for an event asked without an ID more than once, at most once per attempt),
   * an event in doubt at most as often, no event never sent, no more events than the batch's size;
   * and each acknowledged event's batch ran with it.
   */
  async check(): Promise<void> {
    for (const { a, events } of this.sent) {
      const runIds = new Set(events.flatMap((e) => (e.runId === undefined ? [] : [e.runId])));
      // The runs the answers named are waited for first: the listing then shows any run of the key their batches left.
      const results = new Map<string, string[]>();
      for (const id of runIds) {
        const held = await this.run.procs.result<string[]>(id, RESULT_MS, ASK_MS);
        if (held === undefined) this.run.violate("batches", `the batch run ${id} of ${a.key}, which acknowledged events joined, never ran`);
        else results.set(id, held);
      }
      const listed = await askAnyLive<string[]>(this.run, { op: "batchRuns", key: a.key });
      if (listed === undefined) return;
      for (const id of listed) {
        if (results.has(id) || runIds.has(id)) continue;
        const held = await this.run.procs.result<string[]>(id, RESULT_MS, ASK_MS);
        if (held === undefined) this.run.violate("batches", `the batch run ${id} of ${a.key} started but gave no result`);
        else results.set(id, held);
      }
      this.judge(a, events, results);
    }
  }

  private judge(a: BatchAction, events: readonly SentEvent[], results: ReadonlyMap<string, string[]>): void {
    const counts = new Map<string, number>();
    for (const [id, held] of results) {
      if (held.length > a.size)
        this.run.violate("batches", `the batch run ${id} of ${a.key} holds ${held.length} events; its size is ${a.size}`);
      for (const tag of held) counts.set(tag, (counts.get(tag) ?? 0) + 1);
    }
    const byTag = new Map(events.map((e) => [e.tag, e]));
    for (const tag of counts.keys())
      if (!byTag.has(tag)) this.run.violate("batches", `the batch runs of ${a.key} hold ${tag}, which was never sent`);
    for (const e of events) {
      const n = counts.get(e.tag) ?? 0;
      const acked = e.runId !== undefined;
      // An event ID is taken once; a new attempt without one is a new event, which an earlier attempt in doubt may join.
      const most = e.withId ? 1 : e.attempts;
      const how = `${e.withId ? "with its event ID" : "without an event ID"}, ${e.attempts} attempt(s), ${acked ? "acknowledged" : "in doubt"}`;
      if (n > most) this.run.violate("batches", `the batch runs of ${a.key} hold ${e.tag} ${n} times (${how})`);
      if (acked && !(results.get(e.runId!)?.includes(e.tag) ?? false))
        this.run.violate("batches", `the acknowledged ${e.tag} is not in ${e.runId}, the batch run its call answered (${how})`);
    }
    this.run.covered.batches += results.size;
    this.run.note(`  batch ${a.key}: ${[...results].map(([id, held]) => `${id} [${held.join(",")}]`).join(", ") || "no runs"}`);
  }

  /** The process an attempt goes through, one that does not hold the key's shard while one runs, and that holder's slot. */
  private async route(a: BatchAction, attempt: number): Promise<{ caller: EngineHandle; owner: number | undefined }> {
    const { procs, schedule } = this.run;
    const slots = Array.from({ length: schedule.engines }, (_, s) => s);
    // A killed holder's lease outlives it: its shard then has no live owner to strike.
    const { slot: owner } = await flowHolder(this.run, "batch", a.key);
    const others = slots.filter((s) => s !== owner && procs.at(s)?.alive === true && procs.at(s)?.paused !== true);
    const caller = others.length === 0 ? procs.liveFrom(a.slot + attempt) : procs.at(others[(a.slot + attempt) % others.length]!)!;
    return { caller, owner };
  }

  /** SIGKILLs the key's shard's owner `killAtMs` after the first attempt (unless that attempt goes through it); a new process takes its slot. */
  private async killOwner(a: BatchAction, owner: number | undefined, caller: EngineHandle): Promise<void> {
    const { procs } = this.run;
    if (a.killAtMs === undefined) return;
    if (owner === undefined || procs.at(owner) === caller)
      return this.run.note(`  ${a.key}'s shard has no live owner but the caller: none struck`);
    await sleep(a.killAtMs);
    if (await procs.kill(owner)) this.run.later(procs.spawn(owner));
    else this.run.note(`  the owner of ${a.key}'s shard was gone already`);
  }
}
