import { Ctx, Query, RejectedError, RetryPolicy, Signal, Step, Update, Workflow } from "@fusee/runtime";
import { MAX_QTY, isSku } from "./catalog.js";
import { OutOfStockError, PackingTimeoutError } from "./errors.js";
import type { Line, Order, PackedReport, PricedLine, Progress, Receipt, Stage } from "./model.js";
import { InventoryService } from "./services/inventory-service.js";
import { PaymentService } from "./services/payment-service.js";
import { ShippingService } from "./services/shipping-service.js";

/** How long the warehouse has to pack an order before it is cancelled and refunded. */
export const PACKING_TIMEOUT = "1h";
/** The durable pause between packing and shipping in which the customer could still change their mind. */
export const COOLING_OFF = "300ms";

/** A charge or refund as the workflow keeps it; `attempts` counts the calls it took. */
interface Payment {
  readonly chargeId: string;
  readonly cents: number;
  readonly attempts: number;
}

interface Booking {
  readonly trackingNo: string;
  readonly attempts: number;
}

const sum = (lines: readonly PricedLine[]): number => lines.reduce((total, l) => total + l.cents, 0);

/**
 * Fulfils one order, whose ID is the workflow ID: reserve stock, charge, wait for the warehouse to
 * pack, a cooling-off pause, book the shipment. Once money has moved, any failure refunds what is
 * left of the charges and releases the reserved stock before the run fails.
 */
@Workflow()
export class Fulfilment {
  private stage: Stage = "reserving";
  private readonly items: PricedLine[] = [];
  /** Lines added by `addItem`; charged once the parcel is packed. */
  private readonly extras: PricedLine[] = [];
  private readonly reservations: string[] = [];
  private readonly charges: Payment[] = [];
  private readonly refunds: Payment[] = [];
  private report: PackedReport | undefined;
  private adding = 0;
  private retries = 0;

  constructor(
    private readonly ctx: Ctx,
    private readonly payments: PaymentService,
    private readonly inventory: InventoryService,
    private readonly shipping: ShippingService,
  ) {}

  async run(order: Order): Promise<Receipt> {
    const quoted = await this.quote(order.lines);
    this.reservations.push(await this.reserve(order.lines));
    this.items.push(...quoted);
    try {
      this.stage = "charging";
      await this.collect(sum(quoted), "order");

      this.stage = "packing";
      const packed = await this.ctx.condition(() => this.report !== undefined && this.adding === 0, { timeout: PACKING_TIMEOUT });
      if (!packed) throw new PackingTimeoutError(`the warehouse did not pack ${this.ctx.workflowId} within ${PACKING_TIMEOUT}`);
      const absent = new Set(this.report?.missing ?? []);
      const missing = this.items.filter((l) => absent.has(l.sku));
      const shipped = this.items.filter((l) => !absent.has(l.sku));
      if (shipped.length === 0) throw new OutOfStockError(`nothing of ${this.ctx.workflowId} was found on the shelf`);
      const extras = this.extras.filter((l) => !absent.has(l.sku));
      if (extras.length > 0) await this.collect(sum(extras), "extras");
      const paidButMissing = sum(missing.filter((l) => !this.extras.includes(l)));
      const first = this.charges[0];
      if (paidButMissing > 0 && first !== undefined) {
        this.refunds.push(await this.refund(first.chargeId, paidButMissing, `missing at packing: ${[...absent].join(", ")}`));
      }

      this.stage = "cooling-off";
      await this.ctx.sleep(COOLING_OFF);

      this.stage = "shipping";
      const booking = await this.ship(shipped);
      this.retries += booking.attempts - 1;
      this.stage = "shipped";
      const chargedCents = this.charges.reduce((t, c) => t + c.cents, 0);
      const refundedCents = this.refunds.reduce((t, r) => t + r.cents, 0);
      return {
        orderId: this.ctx.workflowId,
        shipped,
        missing,
        chargedCents,
        refundedCents,
        totalCents: chargedCents - refundedCents,
        trackingNo: booking.trackingNo,
        retries: this.retries,
        shippedAt: this.ctx.now(),
      };
    } catch (error) {
      this.stage = "compensating";
      await this.compensate(error instanceof Error ? error.message : String(error));
      throw error;
    }
  }

  /** The warehouse reports the parcel packed; only the first report counts. */
  @Signal()
  packed(report?: PackedReport): void {
    this.report ??= report ?? {};
  }

  @Query()
  progress(): Progress {
    return { stage: this.stage, items: [...this.items], packed: this.report !== undefined, totalCents: sum(this.items) };
  }

  /** Adds a line before the parcel is packed: prices and reserves it; it is charged after packing. */
  @Update({
    validate(this: Fulfilment, line: Line) {
      this.assertAddable(line);
    },
  })
  async addItem(line: Line): Promise<PricedLine> {
    this.adding++;
    try {
      const [priced] = await this.quote([line]);
      if (priced === undefined) throw new Error(`no price for ${line.sku}`);
      this.reservations.push(await this.reserve([line]));
      this.items.push(priced);
      this.extras.push(priced);
      return priced;
    } finally {
      this.adding--;
    }
  }

  /** The validator of `addItem`: rejects malformed lines, unknown products and orders already packed. */
  assertAddable(line: unknown): void {
    const id = this.ctx.workflowId;
    if (line === null || typeof line !== "object")
      throw new RejectedError(`an item for ${id} needs a sku and a qty; got ${JSON.stringify(line)}`);
    const { sku, qty } = line as Partial<Line>;
    if (!isSku(sku)) throw new RejectedError(`unknown SKU ${JSON.stringify(sku)} for ${id}`);
    if (typeof qty !== "number" || !Number.isInteger(qty) || qty < 1 || qty > MAX_QTY) {
      throw new RejectedError(`qty of ${sku} for ${id} must be a whole number from 1 to ${MAX_QTY}; got ${JSON.stringify(qty)}`);
    }
    if (this.report !== undefined || !["reserving", "charging", "packing"].includes(this.stage)) {
      throw new RejectedError(`${id} is already packed (${this.stage}); items can no longer be added`);
    }
  }

  @Step()
  async quote(lines: readonly Line[]): Promise<PricedLine[]> {
    const priced: PricedLine[] = [];
    for (const line of lines) priced.push({ sku: line.sku, qty: line.qty, cents: await this.inventory.price(line.sku, line.qty) });
    return priced;
  }

  @Step({ retry: RetryPolicy.exponential(3, "50ms", "500ms").nonRetryable(OutOfStockError) })
  async reserve(lines: readonly Line[]): Promise<string> {
    return this.inventory.reserve(this.ctx.key(), this.ctx.workflowId, lines);
  }

  @Step({ retry: RetryPolicy.exponential(5, "50ms", "1s") })
  async charge(cents: number, purpose: "order" | "extras"): Promise<Payment> {
    const entry = await this.payments.charge(this.ctx.key(), this.ctx.workflowId, cents, purpose);
    return { chargeId: entry.chargeId, cents: entry.cents, attempts: this.ctx.attempt() };
  }

  @Step({ retry: RetryPolicy.exponential(5, "50ms", "1s") })
  async refund(chargeId: string, cents: number, reason: string): Promise<Payment> {
    const entry = await this.payments.refund(this.ctx.key(), this.ctx.workflowId, chargeId, cents, reason);
    return { chargeId: entry.chargeId, cents: entry.cents, attempts: this.ctx.attempt() };
  }

  @Step()
  async release(reservation: string): Promise<void> {
    await this.inventory.release(this.ctx.key(), this.ctx.workflowId, reservation);
  }

  @Step({ retry: RetryPolicy.exponential(4, "100ms", "1s") })
  async ship(lines: readonly PricedLine[]): Promise<Booking> {
    const trackingNo = await this.shipping.book(this.ctx.key(), this.ctx.workflowId, lines);
    return { trackingNo, attempts: this.ctx.attempt() };
  }

  private async collect(cents: number, purpose: "order" | "extras"): Promise<void> {
    const payment = await this.charge(cents, purpose);
    this.retries += payment.attempts - 1;
    this.charges.push(payment);
  }

  /** Refunds what is left of every charge and gives all reserved stock back. */
  private async compensate(reason: string): Promise<void> {
    for (const charge of this.charges) {
      const refunded = this.refunds.filter((r) => r.chargeId === charge.chargeId).reduce((t, r) => t + r.cents, 0);
      if (charge.cents > refunded) this.refunds.push(await this.refund(charge.chargeId, charge.cents - refunded, reason));
    }
    for (const reservation of this.reservations) await this.release(reservation);
  }
}
