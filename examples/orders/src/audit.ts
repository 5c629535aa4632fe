import { join } from "node:path";
import type { Receipt } from "./model.js";
import { Ledger } from "./services/ledger.js";
import { PAYMENTS_FILE, type PaymentEntry } from "./services/payment-service.js";
import { SHIPMENTS_FILE, type ShipmentEntry } from "./services/shipping-service.js";

/** How an order ended, as the batch saw it. */
export type Outcome = { readonly ok: true; readonly receipt: Receipt } | { readonly ok: false; readonly error: string };

export interface AuditReport {
  readonly charges: number;
  readonly refunds: number;
  readonly shipments: number;
  /** Every way the services' ledgers disagree with the outcomes; empty when all is well. */
  readonly problems: readonly string[];
}

/**
 * Checks the payment and shipping ledgers against the orders' outcomes: no order charged twice for
 * one purpose, what each shipped order paid equals its receipt, failed orders were refunded in full,
 * and every shipped order was booked exactly once.
 */
export function audit(servicesDir: string, outcomes: ReadonlyMap<string, Outcome>): AuditReport {
  const payments = Ledger.read<PaymentEntry>(join(servicesDir, PAYMENTS_FILE));
  const shipments = Ledger.read<ShipmentEntry>(join(servicesDir, SHIPMENTS_FILE));
  const problems: string[] = [];
  for (const [id, outcome] of outcomes) {
    const mine = payments.filter((p) => p.orderId === id);
    const charges = mine.filter((p) => p.kind === "charge");
    for (const purpose of new Set(charges.map((c) => c.purpose))) {
      const n = charges.filter((c) => c.purpose === purpose).length;
      if (n > 1) problems.push(`${id} was charged ${n} times for '${purpose}'`);
    }
    const net = mine.reduce((t, p) => t + (p.kind === "charge" ? p.cents : -p.cents), 0);
    const expected = outcome.ok ? outcome.receipt.totalCents : 0;
    if (net !== expected)
      problems.push(`${id} paid ${net} cents net but ${outcome.ok ? "its receipt says" : "it failed, so it should pay"} ${expected}`);
    const booked = shipments.filter((s) => s.orderId === id).length;
    if (booked !== (outcome.ok ? 1 : 0)) problems.push(`${id} has ${booked} shipments booked`);
  }
  return {
    charges: payments.filter((p) => p.kind === "charge").length,
    refunds: payments.filter((p) => p.kind === "refund").length,
    shipments: shipments.length,
    problems,
  };
}
