import { BadRequestException } from "@nestjs/common";
import { Ctx, Query, RejectedError, RetryPolicy, Signal, Step, Update, Workflow } from "@fusee/runtime";
import {
  InventoryService,
  isSku,
  MAX_QTY,
  OutOfStockError,
  PackingTimeoutError,
  PaymentService,
  ShippingService,
  type Line,
  type Order,
  type PricedLine,
  type Progress,
  type Stage,
} from "fusee-example-orders";

/** How long the warehouse has to pack an order before it is refunded. */
export const PACKING_TIMEOUT = "1h";

/** What a shipped order comes to. */
export interface Receipt {
  readonly orderId: string;
  readonly lines: readonly PricedLine[];
  readonly totalCents: number;
  readonly trackingNo: string;
  readonly shippedAt: number;
}

/** The stages in which items can still be added. */
const OPEN_STAGES: readonly Stage[] = ["reserving", "charging", "packing"];

const sum = (lines: readonly PricedLine[]): number => lines.reduce((total, l) => total + l.cents, 0);

/**
 * Checks out one order, whose ID is the workflow ID: price and reserve the lines, charge, wait for
 * the warehouse to report the parcel packed, charge the lines added meanwhile, book the shipment.
 * If anything fails once money has moved, the charges are refunded and the stock released.
 */
@Workflow()
export class Checkout {
  private stage: Stage = "reserving";
  private readonly items: PricedLine[] = [];
  private readonly extras: PricedLine[] = [];
  private readonly reservations: string[] = [];
  private readonly charges: Array<{ chargeId: string; cents: number }> = [];
  private packed = false;
  private adding = 0;

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
      this.charges.push(await this.charge(sum(quoted), "order"));
      this.stage = "packing";
      const packed = await this.ctx.condition(() => this.packed && this.adding === 0, { timeout: PACKING_TIMEOUT });
      if (!packed) throw new PackingTimeoutError(`the warehouse did not pack ${this.ctx.workflowId} within ${PACKING_TIMEOUT}`);
      if (this.extras.length > 0) this.charges.push(await this.charge(sum(this.extras), "extras"));
      this.stage = "shipping";
      const trackingNo = await this.ship(this.items);
      this.stage = "shipped";
      return { orderId: this.ctx.workflowId, lines: this.items, totalCents: sum(this.items), trackingNo, shippedAt: this.ctx.now() };
    } catch (error) {
      this.stage = "compensating";
      for (const { chargeId, cents } of this.charges)
        await this.refund(chargeId, cents, error instanceof Error ? error.message : String(error));
      for (const reservation of this.reservations) await this.release(reservation);
      throw error;
    }
  }

  /** The warehouse reports the parcel packed. */
  @Signal()
  markPacked(): void {
    this.packed = true;
  }

  @Query()
  progress(): Progress {
    return { stage: this.stage, items: [...this.items], packed: this.packed, totalCents: sum(this.items) };
  }

  /**
   * Adds a line until the parcel is packed; it is priced and reserved now, charged after packing.
   * A malformed line is a bad request; an unknown product or a packed order is refused.
   */
  @Update({
    validate(this: Checkout, line: Line) {
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

  /** The validator of `addItem`. */
  assertAddable(line: unknown): void {
    const id = this.ctx.workflowId;
    const { sku, qty } = (typeof line === "object" && line !== null ? line : {}) as Partial<Line>;
    if (typeof sku !== "string" || typeof qty !== "number" || !Number.isInteger(qty)) {
      throw new BadRequestException(`an item for ${id} needs a sku (a string) and a qty (a whole number); got ${JSON.stringify(line)}`);
    }
    if (!isSku(sku)) throw new RejectedError(`unknown SKU ${JSON.stringify(sku)} for ${id}`);
    if (qty < 1 || qty > MAX_QTY) throw new RejectedError(`qty of ${sku} for ${id} must be from 1 to ${MAX_QTY}; got ${qty}`);
    if (this.packed || !OPEN_STAGES.includes(this.stage)) {
      throw new RejectedError(`${id} is already packed (${this.stage}); items can no longer be added`);
    }
  }

  @Step()
  async quote(lines: readonly Line[]): Promise<PricedLine[]> {
    const priced: PricedLine[] = [];
    for (const { sku, qty } of lines) priced.push({ sku, qty, cents: await this.inventory.price(sku, qty) });
    return priced;
  }

  @Step({ retry: RetryPolicy.exponential(3, "50ms", "500ms").nonRetryable(OutOfStockError) })
  async reserve(lines: readonly Line[]): Promise<string> {
    return this.inventory.reserve(this.ctx.key(), this.ctx.workflowId, lines);
  }

  @Step({ retry: RetryPolicy.exponential(5, "50ms", "1s") })
  async charge(cents: number, purpose: "order" | "extras"): Promise<{ chargeId: string; cents: number }> {
    const { chargeId } = await this.payments.charge(this.ctx.key(), this.ctx.workflowId, cents, purpose);
    return { chargeId, cents };
  }

  @Step({ retry: RetryPolicy.exponential(5, "50ms", "1s") })
  async refund(chargeId: string, cents: number, reason: string): Promise<void> {
    await this.payments.refund(this.ctx.key(), this.ctx.workflowId, chargeId, cents, reason);
  }

  @Step()
  async release(reservation: string): Promise<void> {
    await this.inventory.release(this.ctx.key(), this.ctx.workflowId, reservation);
  }

  @Step({ retry: RetryPolicy.exponential(4, "100ms", "1s") })
  async ship(lines: readonly PricedLine[]): Promise<string> {
    return this.shipping.book(this.ctx.key(), this.ctx.workflowId, lines);
  }
}
