import type { Engine, RunStatus } from "@fusee/runtime";
import { checkReader } from "../lineage-checks.js";
import type { FlowContext } from "./flow-context.js";
import { FTICK } from "./flow-plan.js";
import { FJob } from "./flow-workflows.js";

/** A new run of an ID whose last run finished; a start while it runs is refused. */
const AGAIN = { idPolicy: { running: "fail", finished: "allow" } } as const;
const ENDED = new Set(["ok", "failed", "cancelled", "terminated"]);

/** What the plan knows of one ID it started under retention, from its starts and the listings it saw. */
interface Retained {
  /** The run and status the latest listing showed, and when that run ended. */
  seen: { readonly runId: number; readonly status: string; readonly endedAt: number | undefined } | undefined;
  /** A start was acknowledged: the ID has a run the engine must not lose before its retention. */
  acked: boolean;
  /** The latest time its run is known not to have ended (its start acknowledged, or a listing showed it running). */
  liveAt: number;
  /** A start is in doubt since the latest listing: a run may appear that no acknowledged start made. */
  doubt: boolean;
  /** The latest listing no longer showed the ID, after one did: retention removed it. */
  gone: boolean;
}

/**
 * Runs started under `Config.retention` (and `keepHistory`): at each quiet point a run that ended
 * less than the retention ago is listed, described, found by `listWhere` and by the data-directory
 * reader; one that ended a sweep period (plus a tick) past it, counted from the later of its end
 * plus the retention and the engine's open, is in none of them; a removed run never comes back
 * across crashes; and a new start of a removed ID is run 1 of it.
 */
export class FlowRetention {
  private readonly ids = new Map<string, Retained>();
  /** The engine and listing the data-directory reader was last compared with. */
  private readerSaw = "";

  constructor(private readonly ctx: FlowContext) {}

  private get retentionMs(): number {
    return this.ctx.plan.retention?.ms ?? 0;
  }

  /** The sweep's period for the plan's retention (the engine checks at a tenth of it, 1 s to 1 min). */
  private get sweepMs(): number {
    const r = this.retentionMs;
    return Math.min(60_000, Math.max(1, Math.min(1_000, r), r / 10));
  }

  async start(n: number, hold: number): Promise<void> {
    const id = `R${n}`;
    const known = this.ids.get(id) ?? { seen: undefined, acked: false, liveAt: 0, doubt: false, gone: false };
    this.ids.set(id, known);
    const r = await this.ctx.engines.call(`start ${id}`, (e) => e.start(FJob, id, { hold }, AGAIN));
    if (r.doubt) {
      known.doubt = true;
      return;
    }
    const engine = this.ctx.engines.engine as Engine;
    const seen = known.seen;
    if (!r.ok) {
      if (seen === undefined || ENDED.has(seen.status))
        this.ctx.violate(
          "retention",
          `start ${id} was refused (${String(r.error)}) though its last run ${seen === undefined ? "is gone" : "ended"}`,
        );
      return;
    }
    known.acked = true;
    known.liveAt = this.ctx.engines.now;
    const runId = (await engine.status(id))?.runId;
    const now = this.ctx.engines.now;
    // Removed, or never seen: the ID starts over. Listed and within its retention: the next run of it.
    const expected =
      known.gone || seen === undefined
        ? known.doubt
          ? undefined
          : 1
        : seen.endedAt !== undefined && now < seen.endedAt + this.retentionMs
          ? seen.runId + 1
          : undefined;
    if (expected !== undefined && runId !== expected)
      this.ctx.violate("retention", `start ${id} at ${now} made run ${String(runId)}; the model expects run ${expected}`);
    known.seen = undefined;
    known.gone = false;
  }

  /** Checks every ID against the engine's listing, `describe`, `listWhere` and the data-directory reader. */
  async observe(): Promise<void> {
    const engines = this.ctx.engines;
    if (this.ids.size === 0 || !engines.alive) return;
    const engine = engines.engine as Engine;
    const now = engines.now;
    const listed = new Map((await engine.list(100_000)).map((r) => [r.id, r]));
    for (const [id, known] of this.ids) {
      const r = listed.get(id);
      if (r !== undefined) this.present(id, known, r, now);
      else this.absent(id, known, now);
      const described = await engine.describe(id);
      if ((described === undefined) !== (r === undefined) || (described !== undefined && described.runId !== r?.runId))
        this.ctx.violate(
          "retention",
          `${id}: list shows ${r === undefined ? "nothing" : `run ${r.runId}`}, describe ${described === undefined ? "nothing" : `run ${described.runId}`}`,
        );
    }
    const where = (await engine.listWhere({ type: "FJob" }, 100_000)).map((r) => r.id).sort();
    const fromList = [...listed.values()]
      .filter((r) => r.type === "FJob")
      .map((r) => r.id)
      .sort();
    if (where.join() !== fromList.join())
      this.ctx.violate("retention", `listWhere finds [${where.join(", ")}]; list shows [${fromList.join(", ")}]`);
    // The reader opens the whole directory: it is asked again only when the engine or what it lists changed.
    const state = `${engines.gen?.n ?? 0}|${[...listed.values()].map((r) => `${r.id}:${r.runId}:${r.status}`).join()}`;
    if (state === this.readerSaw) return;
    this.readerSaw = state;
    await checkReader(engine, engines.disk.layer, engines.dir, (_, detail) => this.ctx.violate("retention", detail));
  }

  private present(id: string, known: Retained, r: RunStatus, now: number): void {
    if (known.gone && !known.doubt)
      this.ctx.violate("retention", `${id} is listed again (run ${r.runId}, ${r.status}) after retention removed it, and no start made it`);
    known.gone = false;
    known.doubt = false;
    known.seen = { runId: r.runId, status: r.status, endedAt: ENDED.has(r.status) ? r.endedAt : undefined };
    const ended = known.seen.endedAt;
    if (ended === undefined) {
      known.liveAt = now;
      return;
    }
    const due = Math.max(ended + this.retentionMs, this.ctx.engines.openedAt) + this.sweepMs + FTICK;
    if (now >= due)
      this.ctx.violate(
        "retention",
        `${id} (run ${r.runId}) ended at ${ended} and is still listed at ${now}; retention removes it by ${due}`,
      );
  }

  private absent(id: string, known: Retained, now: number): void {
    const seen = known.seen;
    // It cannot have ended before it was last known running, nor been removed a retention before that.
    const ended = seen?.endedAt ?? known.liveAt;
    if (known.acked && !known.gone && now < ended + this.retentionMs)
      this.ctx.violate(
        "retention",
        `${id} is gone at ${now}; its run ${seen?.endedAt === undefined ? `was running at ${ended}` : `ended at ${ended}`}, and the retention is ${this.retentionMs} ms`,
      );
    if (seen !== undefined) known.gone = true;
    known.doubt = false;
  }
}
