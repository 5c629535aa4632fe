import { join } from "node:path";
import { injectable } from "tsyringe";
import { PaymentGatewayError } from "../errors.js";
import { Ledger } from "./ledger.js";
import { ServiceSettings } from "./settings.js";
import { hash, latency } from "./simulate.js";

/** A charge or a refund as the payment provider filed it. */
export interface PaymentEntry {
  readonly key: string;
  readonly kind: "charge" | "refund";
  readonly orderId: string;
  readonly cents: number;
  /** The charge's ID; for a refund, the charge it refunds. */
  readonly chargeId: string;
  /** Why: `"order"` or `"extras"` for a charge, the reason for a refund. */
  readonly purpose: string;
  readonly at: number;
}

/** The file a {@link PaymentService} files its charges and refunds in. */
export const PAYMENTS_FILE = "payments.jsonl";

/**
 * A payment provider that honours idempotency keys: a second call with a key it has seen returns the
 * first call's entry and moves no money. It fails now and then for a moment, as gateways do.
 */
@injectable()
export class PaymentService {
  private readonly ledger: Ledger<PaymentEntry>;
  private readonly attempts = new Map<string, number>();

  constructor(private readonly settings: ServiceSettings) {
    this.ledger = new Ledger(join(settings.dir, PAYMENTS_FILE));
  }

  /** Charges `cents` once per key. */
  async charge(key: string, orderId: string, cents: number, purpose: "order" | "extras"): Promise<PaymentEntry> {
    const done = this.ledger.get(key);
    if (done !== undefined) return done;
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    await latency(this.settings.latencyMs);
    if (this.settings.paymentGlitches && attempt === 1 && hash(key) % 4 === 0) {
      throw new PaymentGatewayError(`payment gateway timed out charging ${orderId}`);
    }
    const again = this.ledger.get(key);
    if (again !== undefined) return again;
    return this.ledger.append({ key, kind: "charge", orderId, cents, chargeId: `ch_${hash(key).toString(36)}`, purpose, at: Date.now() });
  }

  /** Refunds `cents` of a charge once per key. */
  async refund(key: string, orderId: string, chargeId: string, cents: number, reason: string): Promise<PaymentEntry> {
    const done = this.ledger.get(key);
    if (done !== undefined) return done;
    await latency(this.settings.latencyMs);
    const again = this.ledger.get(key);
    if (again !== undefined) return again;
    return this.ledger.append({ key, kind: "refund", orderId, cents, chargeId, purpose: reason, at: Date.now() });
  }

  /** Everything filed so far, oldest first. */
  entries(): readonly PaymentEntry[] {
    return this.ledger.entries();
  }
}
