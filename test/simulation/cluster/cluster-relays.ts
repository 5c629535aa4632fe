/*
 * Messages between workflows across processes: a relay run, on a shard of its own, sends its plan
 * (`ctx.signalWorkflow`, `updateWorkflow`, `cancelWorkflow`, `startWorkflow`, `signalWithStart`) to
 * runs of the model, while the process holding the relay or its first target may be SIGKILLed. The
 * relay's calls hold the chains of all its targets, so the model knows the order their updates were
 * applied in; once the relay ends, what it saw for each message tells the model what its target must
 * hold: a message sent exactly once, a refused one not at all, and every message in doubt when the
 * relay's end is not known.
 */
import { sleep } from "./cluster-processes.js";
import type { ClientCalls, ScheduleRun } from "./cluster-calls.js";
import type { ClusterAction } from "./cluster-schedule.js";
import type { Outcome } from "./cluster-model.js";
import type { Bumped, Inspection, Relayed, RelayOutcome } from "./wire.js";

/** How long the harness waits for a relay's end; a killed owner's shards wait for its lease to run out. */
export const RELAY_END_MS = 25_000;
/** How long one process is asked for a run's result before another is. */
export const RESULT_ASK_MS = 4_000;

type RelayAction = Extract<ClusterAction, { a: "relay" }>;

export class Relays {
  constructor(
    private readonly run: ScheduleRun,
    private readonly calls: ClientCalls,
  ) {}

  /** The IDs whose calls must wait for the relay: the runs its plan reaches. */
  static targets(a: RelayAction): string[] {
    return [...new Set(a.plan.map((m) => m.to))];
  }

  async relay(a: RelayAction): Promise<void> {
    const { procs } = this.run;
    // The victim is found before the start, so the kill lands while the relay sends: between a send and its record, or mid-call at the target.
    const victim = a.kill === undefined ? undefined : await procs.ownerOf(a.kill.who === "sender" ? a.id : a.plan[0]!.to);
    const started = await this.calls.start(a.id, { route: "owner", slot: 0 }, { relay: a.plan });
    if (a.kill !== undefined && victim !== undefined) {
      await sleep(a.kill.atMs);
      if (await procs.kill(victim)) this.run.later(procs.spawn(victim));
    }
    const outcomes = started ? await procs.result<RelayOutcome[]>(a.id, RELAY_END_MS, RESULT_ASK_MS) : undefined;
    if (outcomes === undefined) {
      this.run.note(`  relay ${a.id}: its end is unknown; every message it may have sent is in doubt`);
      for (const m of a.plan) this.note(m, "doubt", undefined);
      return;
    }
    await this.checkJournal(a, outcomes);
    a.plan.forEach((m, i) => {
      const o = outcomes[i];
      this.note(m, o === undefined ? "refused" : o.ok ? "acked" : "refused", o?.value as Bumped | undefined);
      if (o?.ok === true) this.run.covered.relayed++;
      this.run.note(`  ${m.op} ${m.to} from ${a.id}: ${o === undefined ? "not sent" : o.ok ? `ok ${JSON.stringify(o.value)}` : o.error}`);
    });
  }

  /** The relay's journal holds one message step per message, sent or refused as its code saw it. */
  private async checkJournal(a: RelayAction, outcomes: readonly RelayOutcome[]): Promise<void> {
    const seen = await this.run.procs
      .liveFrom(0)
      .send<Inspection | null>({ op: "inspect", id: a.id })
      .catch(() => undefined);
    if (seen === undefined) return;
    const sends = seen?.steps.filter((s) => s.name.startsWith("ctx.")) ?? [];
    const expected = a.plan.map((m, i) => ({ name: `ctx.${m.op}`, ok: outcomes[i]?.ok === true }));
    const got = sends.map((s) => ({ name: s.name, ok: s.ok }));
    if (JSON.stringify(got) !== JSON.stringify(expected))
      this.run.violate(
        "exactlyOnce",
        `relay ${a.id}'s journal holds the sends ${JSON.stringify(got)}; its code saw ${JSON.stringify(expected)}`,
      );
  }

  /** What one message's outcome tells the model about its target. */
  private note(m: Relayed, outcome: Outcome, answer: Bumped | undefined): void {
    const { model } = this.run;
    switch (m.op) {
      case "signalWorkflow":
        return model.signal(m.to, m.tag, outcome);
      case "signalWithStart":
        if (outcome !== "refused" && !model.ids().includes(m.to)) model.started(m.to, outcome);
        return model.signal(m.to, m.tag, outcome);
      case "startWorkflow":
        // Only this relay starts the ID, so a refusal means a copy of its start met the one before.
        if (outcome === "refused") return this.run.violate("exactlyOnce", `a relay's start of ${m.to} was refused`);
        return model.started(m.to, outcome);
      case "cancelWorkflow":
        return model.cancel(m.to, outcome);
      case "updateWorkflow": {
        if (outcome === "doubt") return model.updateInDoubt(m.to, m.tag, m.by);
        if (outcome === "refused") return model.updateRefused(m.to, m.tag, m.by);
        const wrong = model.updated(m.to, m.tag, m.by, answer!);
        if (wrong !== undefined) this.run.violate(wrong.property, `${wrong.detail} (sent by a relay)`);
        return;
      }
    }
  }
}
