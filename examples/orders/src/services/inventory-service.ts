import { join } from "node:path";
import { injectable } from "tsyringe";
import { CATALOG, isSku } from "../catalog.js";
import { OutOfStockError } from "../errors.js";
import type { Line } from "../model.js";
import { Ledger } from "./ledger.js";
import { ServiceSettings } from "./settings.js";
import { latency } from "./simulate.js";

/** A reservation of stock, or the release of one. */
export interface InventoryEntry {
  readonly key: string;
  readonly kind: "reserve" | "release";
  readonly orderId: string;
  readonly lines: readonly Line[];
  /** For a release: the key of the reservation it gives back. */
  readonly reservation?: string;
  readonly at: number;
}

/** The file an {@link InventoryService} files its reservations in. */
export const INVENTORY_FILE = "inventory.jsonl";

/** The warehouse's stock. Reservations are all-or-nothing and filed under their idempotency key. */
@injectable()
export class InventoryService {
  private readonly ledger: Ledger<InventoryEntry>;
  private readonly left = new Map<string, number>();

  constructor(private readonly settings: ServiceSettings) {
    for (const [sku, product] of Object.entries(CATALOG)) this.left.set(sku, settings.stock[sku] ?? product.stock);
    this.ledger = new Ledger(join(settings.dir, INVENTORY_FILE));
    for (const entry of this.ledger.entries()) this.applyToStock(entry);
  }

  /** The price of `qty` of a product, in cents. */
  async price(sku: string, qty: number): Promise<number> {
    await latency(this.settings.latencyMs);
    if (!isSku(sku)) throw new Error(`unknown SKU '${sku}'`);
    return (CATALOG[sku]?.cents ?? 0) * qty;
  }

  /** Reserves every line or none; returns the reservation's key. */
  async reserve(key: string, orderId: string, lines: readonly Line[]): Promise<string> {
    if (this.ledger.get(key) !== undefined) return key;
    await latency(this.settings.latencyMs);
    if (this.ledger.get(key) !== undefined) return key;
    const wanted = new Map<string, number>();
    for (const { sku, qty } of lines) wanted.set(sku, (wanted.get(sku) ?? 0) + qty);
    for (const [sku, qty] of wanted) {
      const left = this.left.get(sku) ?? 0;
      if (left < qty) throw new OutOfStockError(`${sku} is out of stock for ${orderId}: ${qty} wanted, ${left} left`);
    }
    this.applyToStock(this.ledger.append({ key, kind: "reserve", orderId, lines: [...lines], at: Date.now() }));
    return key;
  }

  /** Gives a reservation's stock back, once. */
  async release(key: string, orderId: string, reservation: string): Promise<void> {
    if (this.ledger.get(key) !== undefined) return;
    await latency(this.settings.latencyMs);
    const reserved = this.ledger.get(reservation);
    const released = this.ledger.entries().some((e) => e.kind === "release" && e.reservation === reservation);
    if (reserved === undefined || released || this.ledger.get(key) !== undefined) return;
    this.applyToStock(this.ledger.append({ key, kind: "release", orderId, lines: reserved.lines, reservation, at: Date.now() }));
  }

  /** Units of a product not reserved. */
  available(sku: string): number {
    return this.left.get(sku) ?? 0;
  }

  private applyToStock(entry: InventoryEntry): void {
    const sign = entry.kind === "reserve" ? -1 : 1;
    for (const { sku, qty } of entry.lines) this.left.set(sku, (this.left.get(sku) ?? 0) + sign * qty);
  }
}
