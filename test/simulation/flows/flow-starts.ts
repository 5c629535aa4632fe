import { FuseeError, RejectedError, type Engine } from "@fusee/runtime";
import type { FlowContext } from "./flow-context.js";
import type { FlowEngines, Outcome } from "./flow-engine.js";
import type { BeatRun, LimitedRun, TokenAnswer } from "./flow-final.js";
import type { VersionedRun } from "./flow-versions.js";
import type { BeatPlan, LimitedStep } from "./flow-plan.js";
import type { FlowProperty } from "./flow-properties.js";
import { AWAIT_TIMEOUT, FAwait, FBeat, FLimited } from "./flow-workflows.js";

/** Each ID is started once: a second start is refused whether the first run runs or ended. */
const ONCE = { idPolicy: { running: "fail", finished: "refuse" } } as const;

/** The runs a plan starts by hand (limited, versioned, heartbeating, awaiting a token), their cancels and token answers. */
export class FlowStarts {
  readonly limited = new Map<string, LimitedRun>();
  readonly answers: TokenAnswer[] = [];
  readonly beats = new Map<string, BeatRun>();
  readonly versioned = new Map<string, VersionedRun>();
  readonly awaiting = new Map<string, "yes" | "doubt">();

  constructor(private readonly ctx: FlowContext) {}

  private get engines(): FlowEngines {
    return this.ctx.engines;
  }

  private violate(property: FlowProperty, detail: string): void {
    this.ctx.violate(property, detail);
  }

  async startLimited(n: number, steps: readonly LimitedStep[]): Promise<void> {
    const id = `L${n}`;
    const known = this.limited.get(id);
    const r = await this.engines.call(`start ${id}`, (e) => e.start(FLimited, id, [...steps], ONCE));
    if (r.doubt) {
      if (known === undefined) this.limited.set(id, { id, steps, acked: false, faultsAtStart: -1, cancels: [] });
      return;
    }
    if (known === undefined) {
      if (!r.ok) return this.violate("calls", `start ${id} failed: ${String(r.error)}`);
      this.limited.set(id, { id, steps, acked: true, faultsAtStart: this.engines.faults, cancels: [] });
      return;
    }
    if (known.acked && r.ok) this.violate("calls", `a second start of ${id} succeeded while its first run exists`);
    if (r.ok && !known.acked) this.limited.set(id, { id, steps, acked: true, faultsAtStart: -1, cancels: [] });
  }

  async startVersioned(n: number): Promise<void> {
    const id = `P${n}`;
    const known = this.versioned.get(id);
    const r = await this.engines.call(`start ${id}`, (e) => e.start("FPatch", id, undefined, ONCE));
    if (r.doubt) {
      if (known === undefined) this.versioned.set(id, { acked: false, startedAt: this.engines.now });
      return;
    }
    if (!r.ok) {
      if (known === undefined) this.violate("calls", `start ${id} failed: ${String(r.error)}`);
      return;
    }
    if (known?.acked === true) return this.violate("calls", `a second start of ${id} succeeded while its first run exists`);
    this.versioned.set(id, { acked: known === undefined, startedAt: this.engines.now });
  }

  async startBeat(n: number, plan: BeatPlan): Promise<void> {
    const id = `B${n}`;
    const known = this.beats.get(id);
    const r = await this.engines.call(`start ${id}`, (e) => e.start(FBeat, id, plan, ONCE));
    // A start in doubt may have made the run: its outcome is not checked, and a later start may be refused.
    if (r.doubt) {
      if (known === undefined) this.beats.set(id, { id, plan, faultsAtStart: -1 });
      return;
    }
    if (!r.ok && known !== undefined) return;
    if (!r.ok) return this.violate("calls", `start ${id} failed: ${String(r.error)}`);
    if (known !== undefined && known.faultsAtStart !== -1)
      return this.violate("calls", `a second start of ${id} succeeded while its first run exists`);
    this.beats.set(id, { id, plan, faultsAtStart: known === undefined ? this.engines.faults : -1 });
  }

  async cancelLimited(n: number): Promise<void> {
    const id = `L${n}`;
    const known = this.limited.get(id);
    const before = known === undefined ? undefined : await (this.engines.engine as Engine).status(id);
    const r = await this.engines.call(`cancel ${id}`, (e) => e.run(id).cancel());
    if (r.doubt) return;
    if (!r.ok && !(r.error instanceof FuseeError)) return this.violate("calls", `cancel ${id} threw ${String(r.error)}, not a FuseeError`);
    if (known?.acked === true && r.ok && before !== undefined && !["ok", "failed", "cancelled", "terminated"].includes(before.status))
      known.cancels.push(this.engines.now);
  }

  async startAwait(n: number): Promise<void> {
    const id = `T${n}`;
    const known = this.awaiting.get(id);
    const r = await this.engines.call(`start ${id}`, (e) => e.start(FAwait, id, undefined, ONCE));
    if (r.doubt) {
      if (known === undefined) this.awaiting.set(id, "doubt");
      return;
    }
    if (r.ok) {
      if (known === "yes") this.violate("calls", `a second start of ${id} succeeded while its first run exists`);
      this.awaiting.set(id, "yes");
    } else if (known === undefined) this.violate("calls", `start ${id} failed: ${String(r.error)}`);
  }

  async answer(kind: "complete" | "fail", n: number, value: number | undefined): Promise<void> {
    const id = `T${n}`;
    const token = this.engines.world.tokens.get(id);
    if (token === undefined) return;
    const status = await (this.engines.engine as Engine).status(id);
    const faults = this.engines.faults;
    const r: Outcome = await this.engines.call(`${kind} ${id}`, (e) =>
      kind === "complete" ? e.complete(token, value) : e.fail(token, new Error(`failed ${id}`)),
    );
    const earlier = this.answers.filter((a) => a.id === id);
    this.answers.push({ id, kind, value, doubt: r.doubt, ok: !r.doubt && r.ok, faults: this.engines.faults });
    if (r.doubt) return;
    if (!r.ok && !(r.error instanceof RejectedError))
      return this.violate("tokens", `${kind} ${id} threw ${String(r.error)}, not a RejectedError`);
    if (r.ok && earlier.some((a) => a.ok))
      this.violate("tokens", `${kind} ${id} was accepted, but an earlier answer to its token was acknowledged`);
    const now = this.engines.now;
    const timesOut = (this.engines.world.tokenAt.get(id) ?? now) + AWAIT_TIMEOUT;
    if (r.ok && now > timesOut && faults === this.engines.faults)
      this.violate("tokens", `${kind} ${id} at ${now} was accepted; its wait had timed out at ${timesOut}`);
    // Nothing could have spoiled the token: no answer before, no fault, the run waits, its wait has not timed out.
    const clean =
      earlier.length === 0 &&
      this.engines.faults === 0 &&
      now < timesOut &&
      status !== undefined &&
      !["ok", "failed"].includes(status.status);
    if (!r.ok && clean)
      this.violate("tokens", `${kind} ${id} was refused (${String(r.error)}) though its run waits and no answer came before`);
  }
}
