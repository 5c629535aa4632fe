import { injectable } from "tsyringe";

/** A card the payment provider turned down; not worth retrying. */
export class CardDeclinedError extends Error {
  constructor(readonly customer: string) {
    super(`the card of ${customer} was declined`);
    this.name = "CardDeclinedError";
  }
}

/** A charge the provider made, once per idempotency key. */
export interface Charge {
  readonly key: string;
  readonly customer: string;
  readonly cents: number;
}

/**
 * A payment provider as tests drive it: charges are kept per idempotency key, so a retried charge
 * is made once, and `outages` makes the next calls fail as a provider that is down would.
 */
@injectable()
export class Billing {
  readonly charges = new Map<string, Charge>();
  /** Calls left to fail with a provider outage. */
  outages = 0;
  /** Customers whose cards are declined. */
  readonly declined = new Set<string>();
  calls = 0;

  async charge(key: string, customer: string, cents: number): Promise<Charge> {
    this.calls++;
    if (this.outages > 0) {
      this.outages--;
      throw new Error("the payment provider is unavailable");
    }
    if (this.declined.has(customer)) throw new CardDeclinedError(customer);
    const made = this.charges.get(key) ?? { key, customer, cents };
    this.charges.set(key, made);
    return made;
  }
}
