import type { Engine, RunStatus } from "@fusee/runtime";
import type { FlowEngines } from "./flow-engine.js";
import type { BeatPlan, FlowPlan, LimitedStep } from "./flow-plan.js";
import type { FlowProperty } from "./flow-properties.js";
import { LIMIT } from "./flow-workflows.js";
import { checkVersions, type VersionedRun } from "./flow-versions.js";
import type { ScheduleModel } from "./schedule-model.js";
import type { SentEvent } from "./window-model.js";

/** A limited run the plan started: acknowledged or in doubt, and the cancels acknowledged while it ran. */
export interface LimitedRun {
  readonly id: string;
  readonly steps: readonly LimitedStep[];
  readonly acked: boolean;
  /** Faults before its start was acknowledged (-1 when unknown): a fault later blurs its steps' outcomes. */
  readonly faultsAtStart: number;
  readonly cancels: number[];
}

/** An answer to a token (`engine.complete` or `engine.fail`) and what came of it. */
export interface TokenAnswer {
  readonly id: string;
  readonly kind: "complete" | "fail";
  readonly value: number | undefined;
  readonly doubt: boolean;
  readonly ok: boolean;
  readonly faults: number;
}

/** A heartbeating run the plan started, acknowledged. */
export interface BeatRun {
  readonly id: string;
  readonly plan: BeatPlan;
  readonly faultsAtStart: number;
}

const ENDED = ["ok", "failed", "cancelled", "terminated"];

/** The checks at the end of a plan, once the engine ran long enough without faults for everything to end. */
export class FlowFinal {
  private statuses = new Map<string, RunStatus>();

  constructor(
    private readonly engines: FlowEngines,
    private readonly plan: FlowPlan,
    private readonly violate: (p: FlowProperty, detail: string) => void,
  ) {}

  private get engine(): Engine {
    return this.engines.engine as Engine;
  }

  async check(
    schedules: readonly ScheduleModel[],
    sent: readonly SentEvent[],
    limited: ReadonlyMap<string, { readonly acked: boolean } & LimitedRun>,
    answers: readonly TokenAnswer[],
    awaiting: ReadonlyMap<string, "yes" | "doubt">,
  ): Promise<void> {
    for (const s of await this.engine.list(100_000)) this.statuses.set(s.id, s);
    await this.schedules(schedules);
    await this.limits(limited);
    await this.windows(sent);
    await this.tokens(answers, awaiting);
  }

  private async schedules(models: readonly ScheduleModel[]): Promise<void> {
    for (const s of models) {
      const d = s.deleted === true ? undefined : await this.engine.getSchedule(s.name).describe();
      if (d !== undefined && typeof s.buffered === "number" && d.buffered !== s.buffered)
        this.violate("schedules", `${s.name} buffers ${d.buffered ?? "no instant"}; the model buffers ${s.buffered}`);
      for (const [t, e] of s.expect) {
        // The buffered instant starts once the run before it ends, which may be after the plan.
        if (t === s.buffered) continue;
        if (e === "start" && !this.statuses.has(`${s.name}@${t}`))
          this.violate(
            "schedules",
            `${s.name}@${t} never started; the model says its policy starts it${s.exempt.has(t) ? " (a backfill or catch-up)" : ""}`,
          );
      }
    }
  }

  private async limits(limited: ReadonlyMap<string, LimitedRun>): Promise<void> {
    const world = this.engines.world;
    const rate = this.plan.limit.perSecond;
    if (rate > 0) {
      const starts = world.bodies.map((b) => b.startedAt).sort((a, b) => a - b);
      for (let i = 0; i + rate < starts.length; i++) {
        const a = starts[i] as number;
        const b = starts[i + rate] as number;
        if (b - a < 1000)
          this.violate("limits", `${rate + 1} bodies under limit '${LIMIT}' (perSecond ${rate}) started within ${b - a}ms, from ${a}`);
      }
    }
    const gen = this.engines.gen?.n;
    for (const b of world.bodies) {
      if (b.generation === gen && b.endedAt === undefined)
        this.violate(
          "limits",
          `the body of ${b.workflowId}/${b.step} (begun at ${b.startedAt}) still runs; its timeout or cancel never aborted it`,
        );
    }
    if (this.engine.limitInUse(LIMIT) !== 0 || this.engine.limitWaiting(LIMIT) !== 0)
      this.violate(
        "limits",
        `with every run ended, limit '${LIMIT}' has ${this.engine.limitInUse(LIMIT)} permits in use and ${this.engine.limitWaiting(LIMIT)} steps waiting`,
      );
    for (const run of limited.values()) {
      const s = this.statuses.get(run.id);
      if (!run.acked) continue;
      if (s === undefined || !ENDED.includes(s.status)) {
        this.violate(
          "limits",
          `${run.id} has not ended (${s?.status ?? "no run"}) after ${this.plan.actions.length} actions and a quiet settle`,
        );
        continue;
      }
      if (run.cancels.length > 0) {
        if (s.status !== "cancelled") this.violate("limits", `${run.id} ended ${s.status}; a cancel was acknowledged while it ran`);
        continue;
      }
      if (run.faultsAtStart !== this.engines.faults) continue;
      const expected = run.steps.map((x) =>
        x.body === "hang" || x.workMs > x.timeoutMs ? "failed" : x.workMs < x.timeoutMs ? "ok" : "either",
      );
      const got = s.status === "ok" ? ((await this.engine.run(run.id).result()) as string[]) : [];
      if (s.status !== "ok" || got.length !== expected.length || got.some((g, i) => expected[i] !== "either" && expected[i] !== g))
        this.violate("limits", `${run.id} ended ${s.status} with ${JSON.stringify(got)}; the model expects ${JSON.stringify(expected)}`);
    }
  }

  private async windows(sent: readonly SentEvent[]): Promise<void> {
    const inputs = new Map<string, unknown>();
    for (const e of sent) {
      if (e.runId === undefined || inputs.has(e.runId)) continue;
      const s = this.statuses.get(e.runId);
      if (s === undefined || s.status !== "ok") {
        this.violate("windows", `${e.family} ${e.key} e${e.ev} was acknowledged with run ${e.runId}, which is ${s?.status ?? "missing"}`);
        inputs.set(e.runId, undefined);
        continue;
      }
      inputs.set(e.runId, await this.engine.run(e.runId).result());
    }
    // Every event ID sent more than once may land in more than one window (older windows are forgotten).
    const sends = new Map<string, number>();
    for (const e of sent) sends.set(`${e.family}/${e.key}/${e.ev}`, (sends.get(`${e.family}/${e.key}/${e.ev}`) ?? 0) + 1);
    for (const e of sent) {
      if (e.runId === undefined) continue;
      const input = inputs.get(e.runId);
      if (e.family === "batch") {
        const list = Array.isArray(input) ? (input as number[]) : [];
        if (!list.includes(e.ev))
          this.violate(
            "windows",
            `batch ${e.key} e${e.ev} was acknowledged with run ${e.runId}, whose input ${JSON.stringify(input)} lacks it`,
          );
        if (list.length > this.plan.batch.size)
          this.violate("windows", `run ${e.runId} got a batch of ${list.length}, more than ${this.plan.batch.size}`);
        if (new Set(list).size !== list.length) this.violate("windows", `run ${e.runId} got an event twice: ${JSON.stringify(list)}`);
        continue;
      }
      const mine = sent.filter((x) => x.family === "debounce" && x.key === e.key && x.runId === e.runId);
      const inDoubt = sent.some((x) => x.family === "debounce" && x.key === e.key && x.runId === undefined && x.ev === input);
      if (!mine.some((x) => x.ev === input) && !inDoubt)
        this.violate("windows", `debounced run ${e.runId} started with ${JSON.stringify(input)}, none of the events acknowledged with it`);
      // The latest event that joined the window, when the model knows which ones did.
      const joined = mine.filter((x) => x.retry !== true);
      const last = joined[joined.length - 1];
      if (last === undefined || mine.some((x) => x.retry === undefined)) continue;
      const doubtAfter = sent.some((x) => x.family === "debounce" && x.key === e.key && x.runId === undefined && x.at >= last.at);
      if (!doubtAfter && input !== last.ev)
        this.violate(
          "windows",
          `debounced run ${e.runId} started with ${JSON.stringify(input)}; its latest acknowledged event is e${last.ev}`,
        );
    }
    const seen = new Map<string, number>();
    for (const [runId, input] of inputs) {
      if (!runId.includes("#") || !Array.isArray(input)) continue;
      const key = runId.slice(0, runId.indexOf("#"));
      for (const ev of input as number[]) seen.set(`batch/${key}/${ev}`, (seen.get(`batch/${key}/${ev}`) ?? 0) + 1);
    }
    for (const [k, n] of seen)
      if (n > (sends.get(k) ?? 0)) this.violate("windows", `event ${k} was sent ${sends.get(k) ?? 0} times and delivered in ${n} batches`);
  }

  /**
   * Each attempt of a heartbeating step resumes from the progress the attempt before it reported last
   * (in one engine), or, after a fault, from progress some attempt reported; the run ends with all its work.
   */
  async beats(runs: ReadonlyMap<string, BeatRun>): Promise<void> {
    const attempts = this.engines.world.attempts;
    for (let i = 0; i < attempts.length; i++) {
      const a = attempts[i] as (typeof attempts)[number];
      const earlier = attempts.slice(0, i).filter((x) => x.workflowId === a.workflowId);
      const before = earlier[earlier.length - 1];
      if (before !== undefined && before.generation === a.generation && before.attempt === a.attempt - 1) {
        const last = before.beats[before.beats.length - 1] ?? before.from;
        if (a.from !== last)
          this.violate(
            "progress",
            `attempt ${a.attempt} of ${a.workflowId} began at progress ${a.from}; attempt ${before.attempt} reported ${last} last`,
          );
      } else if (a.from !== 0 && !earlier.some((x) => x.beats.includes(a.from)))
        this.violate("progress", `attempt ${a.attempt} of ${a.workflowId} began at progress ${a.from}, which no attempt reported`);
    }
    for (const run of runs.values()) {
      if (run.faultsAtStart !== this.engines.faults) continue;
      const s = this.statuses.get(run.id);
      const got = s?.status === "ok" ? await this.engine.run(run.id).result() : undefined;
      if (got !== run.plan.total)
        this.violate(
          "progress",
          `${run.id} ended ${s?.status ?? "missing"} with ${JSON.stringify(got)}; the model expects ${run.plan.total}`,
        );
    }
  }

  /** Each acknowledged versioned run ended as the model of its versions says (`flow-versions.ts`). */
  async versions(runs: ReadonlyMap<string, VersionedRun>): Promise<Record<string, number>> {
    return checkVersions(this.engine, this.statuses, runs, this.engines.lives, (n) => this.engines.version(n), this.violate);
  }

  private async tokens(answers: readonly TokenAnswer[], awaiting: ReadonlyMap<string, "yes" | "doubt">): Promise<void> {
    for (const [id, started] of awaiting) {
      // Unanswered, the wait times out: the run fails.
      if (started !== "yes" || answers.some((a) => a.id === id)) continue;
      const s = this.statuses.get(id);
      if (s?.status !== "failed")
        this.violate("tokens", `${id} is ${s?.status ?? "missing"}; no answer came and its wait should have timed out`);
    }
    const ids = new Set(answers.map((a) => a.id));
    for (const id of ids) {
      const first = answers.find((a) => a.id === id && (a.ok || a.doubt));
      if (first === undefined || first.doubt) continue;
      const s = this.statuses.get(id);
      const want = first.kind === "complete" ? "ok" : "failed";
      if (s?.status !== want) {
        this.violate("tokens", `${id} is ${s?.status ?? "missing"}; its first acknowledged answer was ${first.kind}`);
        continue;
      }
      if (want === "ok") {
        const got = await this.engine.run(id).result();
        if (got !== first.value)
          this.violate("tokens", `${id} returned ${JSON.stringify(got)}; its first acknowledged answer was ${first.value}`);
      }
    }
  }
}
