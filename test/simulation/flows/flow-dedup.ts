import type { Engine } from "@fusee/runtime";
import type { FlowContext } from "./flow-context.js";
import { FDedup } from "./flow-workflows.js";

/** An update outcome a run knows, from applying it or from the run it replaced: its answer and when it was journaled. */
interface Known {
  readonly answer: string;
  readonly at: number;
}

/** One way things may stand for a `D<d>` ID, given what the plan knows: which run is current, what it knows and applied. */
interface World {
  readonly run: number;
  readonly known: ReadonlyMap<string, Known>;
  readonly applied: readonly number[];
}

/** Beyond this many ways things may stand (calls in doubt pile up), an ID is no longer checked. */
const MAX_WORLDS = 256;
const IDS = ["D0", "D1"] as const;

function key(w: World): string {
  return `${w.run}|${[...w.known].map(([u, k]) => `${u}=${k.answer}@${k.at}`).join(",")}|${w.applied.join(",")}`;
}

/**
 * Updates with IDs (`run.update(..., { id })`) to runs that continue as new on a signal, under a short
 * `Config.idempotencyWindow`. The documented rules: a run remembers the update IDs it applied for as
 * long as it lives; continue-as-new hands the next run those it knows (applied or remembered) whose
 * outcome was journaled within the window before the hand-off, each with its first outcome and time;
 * a repeated ID the run knows is answered with its first outcome and not applied; any other is
 * applied. A call in doubt (its engine died) splits the model into the ways it may have gone (applied
 * or not, continued or not); an acknowledged answer keeps the ways that give it, and none left is a
 * violation.
 */
export class FlowDedup {
  private readonly worlds = new Map<string, World[] | undefined>();
  private calls = 0;
  /** `D<d>/u<u>` pairs an acknowledged update already asked for: a later call of one is a repeat. */
  private readonly applied = new Set<string>();
  /**
   * Acknowledged answers of repeated IDs: from the first outcome in the run that applied it, or in a
   * later run it was handed to; and applied again, the window having let the ID go.
   */
  readonly seen = { remembered: 0, handedOn: 0, forgotten: 0 };

  constructor(private readonly ctx: FlowContext) {}

  private get windowMs(): number {
    return this.ctx.plan.idem?.windowMs ?? 0;
  }

  /** Starts the runs the plan updates (a dedup plan's, at its start, before any fault is armed). */
  async create(): Promise<void> {
    if (this.ctx.plan.idem === undefined) return;
    for (const id of IDS) {
      const r = await this.ctx.engines.call(`start ${id}`, (e) => e.start(FDedup, id, 1));
      if (r.doubt || !r.ok) {
        this.ctx.violate("dedup", `start ${id} ${r.doubt ? "is in doubt" : `failed: ${String(r.error)}`} on a fault-free engine`);
        this.worlds.set(id, undefined);
      } else this.worlds.set(id, [{ run: 1, known: new Map(), applied: [] }]);
    }
  }

  /** Update `bump` of `D<d>` with ID `u<u>`; its answer names the run that applied it and the call. */
  async update(d: number, u: number): Promise<void> {
    const id = IDS[d] as string;
    const updateId = `u${u}`;
    const call = ++this.calls;
    const now = this.ctx.engines.now;
    const r = await this.ctx.engines.call(`update ${id} ${updateId} (call ${call})`, (e) =>
      e.run(id).update<string>("bump", call, { id: updateId }),
    );
    const worlds = this.worlds.get(id);
    if (worlds === undefined) return;
    const next: World[] = [];
    for (const w of worlds) {
      const known = w.known.get(updateId);
      if (known !== undefined) {
        next.push(w);
        continue;
      }
      const fresh: World = {
        run: w.run,
        known: new Map([...w.known, [updateId, { answer: `${w.run}:${call}`, at: now }]]),
        applied: [...w.applied, call],
      };
      if (r.doubt) next.push(w, fresh);
      else next.push(fresh);
    }
    if (r.doubt) return this.keep(id, next);
    if (!r.ok) {
      this.ctx.violate("dedup", `update ${updateId} of ${id} (call ${call}) failed: ${String(r.error)}`);
      return (this.worlds.set(id, undefined), undefined);
    }
    const answers = (w: World): string | undefined => w.known.get(updateId)?.answer;
    const agree = next.filter((w) => answers(w) === r.value);
    if (agree.length === 0) {
      const expected = [...new Set(next.map(answers))].join(" or ");
      this.ctx.violate(
        "dedup",
        `update ${updateId} of ${id} (call ${call}, at ${now}) answered ${JSON.stringify(r.value)}; under a window of ${this.windowMs} ms the model expects ${expected}`,
      );
      this.worlds.set(id, undefined);
      return;
    }
    const first = (w: World): boolean => w.known.get(updateId)?.answer !== `${w.run}:${call}`;
    if (agree.every(first)) {
      if (agree.every((w) => !(w.known.get(updateId)?.answer ?? "").startsWith(`${w.run}:`))) this.seen.handedOn++;
      else this.seen.remembered++;
    } else if (worlds.some((w) => w.run > 1 && !w.known.has(updateId)) && this.applied.has(`${id}/${updateId}`)) this.seen.forgotten++;
    this.applied.add(`${id}/${updateId}`);
    this.keep(id, agree);
  }

  /** Signal `next`: the run continues as new, handing on the outcomes of the window before now. */
  async next(d: number): Promise<void> {
    const id = IDS[d] as string;
    const now = this.ctx.engines.now;
    const r = await this.ctx.engines.call(`signal ${id} next`, (e) => e.run(id).signal("next", undefined));
    const worlds = this.worlds.get(id);
    if (worlds === undefined) return;
    if (!r.doubt && !r.ok) {
      this.ctx.violate("dedup", `signal next to ${id} failed: ${String(r.error)}`);
      return (this.worlds.set(id, undefined), undefined);
    }
    const since = now - this.windowMs;
    const next: World[] = [];
    for (const w of worlds) {
      const handed: World = { run: w.run + 1, known: new Map([...w.known].filter(([, k]) => k.at >= since)), applied: [] };
      if (r.doubt) next.push(w);
      next.push(handed);
    }
    this.keep(id, next);
  }

  /** At the end: each ID's run is one the model allows, and it applied exactly the calls the model says. */
  async final(): Promise<void> {
    const engine = this.ctx.engines.engine as Engine;
    for (const [id, worlds] of this.worlds) {
      if (worlds === undefined) continue;
      const status = await engine.status(id);
      const applied = await engine
        .run(id)
        .query<number[]>("appliedCalls")
        .catch((e: unknown) => e);
      const match = worlds.filter((w) => w.run === status?.runId && JSON.stringify(w.applied) === JSON.stringify(applied));
      if (match.length === 0)
        this.ctx.violate(
          "dedup",
          `${id} is at run ${status?.runId ?? "none"} (${status?.status ?? "missing"}), which applied ${applied instanceof Error ? String(applied) : JSON.stringify(applied)}; the model expects ${worlds
            .map((w) => `run ${w.run} applying ${JSON.stringify(w.applied)}`)
            .join(" or ")}`,
        );
    }
  }

  private keep(id: string, worlds: World[]): void {
    const unique = [...new Map(worlds.map((w) => [key(w), w])).values()];
    if (unique.length > MAX_WORLDS) {
      this.ctx.trace.push(`  ${id}: more than ${MAX_WORLDS} ways it may stand; no longer checked`);
      this.worlds.set(id, undefined);
      return;
    }
    this.worlds.set(id, unique);
  }
}
