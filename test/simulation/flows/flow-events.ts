import { Batch, Debounce } from "@fusee/runtime";
import type { FlowContext } from "./flow-context.js";
import type { FlowEngines } from "./flow-engine.js";
import type { FlowProperty } from "./flow-properties.js";
import { FCollect } from "./flow-workflows.js";
import { WindowModel, type Family, type SentEvent } from "./window-model.js";

/** The batched and debounced events of a plan, each checked against the window model of its key as it is sent. */
export class FlowEvents {
  readonly sent: SentEvent[] = [];
  private readonly windows = new Map<string, WindowModel>();

  constructor(private readonly ctx: FlowContext) {
    const { batch, debounce } = ctx.plan;
    for (const key of ["k0", "k1"] as const) {
      this.windows.set(`batch/${key}`, new WindowModel("batch", key, { size: batch.size, deadline: (first) => first + batch.timeoutMs }));
      this.windows.set(
        `debounce/${key}`,
        new WindowModel("debounce", key, {
          size: Infinity,
          deadline: (first, last) =>
            Math.min(last + debounce.delayMs, debounce.maxWaitMs === undefined ? Infinity : first + debounce.maxWaitMs),
        }),
      );
    }
  }

  private get engines(): FlowEngines {
    return this.ctx.engines;
  }

  private get plan(): FlowContext["plan"] {
    return this.ctx.plan;
  }

  private violate(property: FlowProperty, detail: string): void {
    this.ctx.violate(property, detail);
  }

  async event(family: Family, key: "k0" | "k1", ev: number): Promise<void> {
    const model = this.windows.get(`${family}/${key}`) as WindowModel;
    const now = this.engines.now;
    const options = { eventId: `e${ev}` };
    const r = await this.engines.call(`${family} ${key} e${ev}`, (e) =>
      family === "batch"
        ? e.batch(FCollect, key, ev, Batch.of(this.plan.batch.size, this.plan.batch.timeoutMs), options)
        : e.debounce(FCollect, key, ev, this.debounceRule(), options),
    );
    if (r.doubt) {
      model.blurUntil(now, ev);
      this.sent.push({ family, key, ev, at: now, runId: undefined, retry: undefined });
      return;
    }
    if (!r.ok) return this.violate("windows", `${family} ${key} e${ev} failed: ${String(r.error)}`);
    const runId = (r.value as { id: string }).id;
    const expected = model.send(ev, now);
    this.sent.push({ family, key, ev, at: now, runId, retry: expected === undefined ? undefined : model.retried });
    if (expected !== undefined && expected !== runId)
      this.violate("windows", `${family} ${key} e${ev} at ${now} joined run ${runId}; the model puts it in ${expected}`);
  }

  private debounceRule(): Debounce {
    const d = this.plan.debounce;
    const rule = Debounce.of(d.delayMs);
    return d.maxWaitMs === undefined ? rule : rule.maxWait(d.maxWaitMs);
  }
}
