import { join } from "node:path";
import { injectable } from "tsyringe";
import { CarrierUnavailableError } from "../errors.js";
import type { Line } from "../model.js";
import { Ledger } from "./ledger.js";
import { ServiceSettings } from "./settings.js";
import { hash, latency } from "./simulate.js";

/** A booked shipment. */
export interface ShipmentEntry {
  readonly key: string;
  readonly orderId: string;
  readonly trackingNo: string;
  readonly lines: readonly Line[];
  readonly at: number;
}

/** A booking attempt the carrier turned down. */
interface RefusalEntry {
  readonly key: string;
  readonly attempt: number;
}

/** The file a {@link ShippingService} files its bookings in. */
export const SHIPMENTS_FILE = "shipments.jsonl";
/** The file the carrier keeps its refusals in, so a booking's count of tries outlives our process. */
const REFUSALS_FILE = "carrier-refusals.jsonl";

/**
 * A carrier whose booking API is flaky: each booking fails its first one or more attempts (up to
 * `shippingFailures`, the same count for a key on every run) before it is accepted. The carrier
 * counts a booking's tries itself, across restarts of the application that calls it.
 */
@injectable()
export class ShippingService {
  private readonly ledger: Ledger<ShipmentEntry>;
  private readonly refusals: Ledger<RefusalEntry>;

  constructor(private readonly settings: ServiceSettings) {
    this.ledger = new Ledger(join(settings.dir, SHIPMENTS_FILE));
    this.refusals = new Ledger(join(settings.dir, REFUSALS_FILE));
  }

  /** Books a shipment once per key and returns its tracking number. */
  async book(key: string, orderId: string, lines: readonly Line[]): Promise<string> {
    const done = this.ledger.get(key);
    if (done !== undefined) return done.trackingNo;
    const attempt = (this.refusals.get(key)?.attempt ?? 0) + 1;
    await latency(this.settings.latencyMs);
    if (attempt <= this.failuresFor(key)) {
      this.refusals.append({ key, attempt });
      throw new CarrierUnavailableError(`carrier timed out booking ${orderId} (attempt ${attempt})`);
    }
    const again = this.ledger.get(key);
    if (again !== undefined) return again.trackingNo;
    const trackingNo = `TRK${hash(key).toString(36).toUpperCase().padStart(7, "0")}`;
    return this.ledger.append({ key, orderId, trackingNo, lines: [...lines], at: Date.now() }).trackingNo;
  }

  private failuresFor(key: string): number {
    const most = this.settings.shippingFailures;
    if (most <= 0) return 0;
    return Number.isFinite(most) ? 1 + (hash(key) % most) : Infinity;
  }
}
