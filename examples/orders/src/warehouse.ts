import { setTimeout as sleep } from "node:timers/promises";
import { RejectedError } from "@fusee/runtime";
import type { OrderScript } from "./batch.js";
import { money } from "./catalog.js";
import type { Display } from "./display.js";
import type { FulfilmentClient } from "./fusee.generated.js";
import type { Progress } from "./model.js";

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * The warehouse, acting on what the `progress` query reports: once an order waits to be packed, it
 * tries the customer's extra items (through the `addItem` update), packs after a while and sends the
 * `packed` signal. Update IDs are fixed per order, so after a restart a repeated update returns the
 * recorded result instead of adding the item again.
 */
export class Warehouse {
  private readonly handled = new Set<string>();
  private readonly work = new Set<Promise<void>>();

  constructor(
    private readonly fulfilment: FulfilmentClient,
    private readonly display: Display,
    private readonly stopping: () => boolean,
  ) {}

  /** Called with each progress report; starts handling an order the first time it waits for packing. */
  see(script: OrderScript, progress: Progress): void {
    if (progress.stage !== "packing" || progress.packed || this.handled.has(script.id)) return;
    this.handled.add(script.id);
    const job: Promise<void> = this.handle(script)
      .catch((e: unknown) => {
        if (!this.stopping()) this.display.event(script.id, `warehouse error: ${messageOf(e)}`);
      })
      .finally(() => this.work.delete(job));
    this.work.add(job);
  }

  /** Resolves when every order seen so far has been handled. */
  async idle(): Promise<void> {
    await Promise.all([...this.work]);
  }

  private async handle(script: OrderScript): Promise<void> {
    const run = this.fulfilment.run(script.id);
    if (script.bad !== undefined) {
      const { sku, qty } = script.bad;
      try {
        await run.updates.addItem(script.bad, { id: `${script.id}/bad-item` });
        this.display.event(script.id, `+ ${sku} ×${qty} was accepted, but the validator should have refused it`);
      } catch (e) {
        if (!(e instanceof RejectedError)) throw e;
        this.display.event(script.id, `✗ ${sku} ×${qty} refused: ${messageOf(e)}`);
      }
    }
    if (script.extra !== undefined) {
      const { sku, qty } = script.extra;
      try {
        const line = await run.updates.addItem(script.extra, { id: `${script.id}/extra` });
        this.display.event(script.id, `+ ${sku} ×${qty} added (${money(line.cents)})`);
      } catch (e) {
        if (this.stopping()) return;
        this.display.event(script.id, `✗ ${sku} ×${qty} not added: ${messageOf(e)}`);
      }
    }
    await sleep(script.packAfterMs);
    if (this.stopping()) return;
    await run.signals.packed(script.report);
    const missing = script.report.missing ?? [];
    this.display.event(script.id, missing.length > 0 ? `packed, ${missing.join(", ")} missing from the shelf` : "packed");
  }
}
