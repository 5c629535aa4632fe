import { Body, Controller, Get, Headers, HttpCode, Param, Post, UnprocessableEntityException, UseFilters } from "@nestjs/common";
import type { RunStatusValue } from "@fusee/runtime";
import { FuseeExceptionFilter } from "@fusee/nestjs";
import { OutOfStockError, type Line, type Order, type PricedLine, type Progress } from "fusee-example-orders";
import { CheckoutClient, type CheckoutRun } from "../fusee.generated.js";
import type { Receipt } from "./checkout.workflow.js";
import { OrderPipe } from "./order.pipe.js";

/** An order as the API shows it. */
export interface OrderView {
  readonly id: string;
  readonly status: RunStatusValue;
  /** While the order is under way. */
  readonly progress?: Progress;
  /** Once it shipped. */
  readonly receipt?: Receipt;
  /** Once it failed. */
  readonly error?: string;
}

/** Orders over HTTP; each call goes through the generated client to the order's Checkout run. */
@Controller("orders")
@UseFilters(FuseeExceptionFilter)
export class OrdersController {
  constructor(private readonly checkouts: CheckoutClient) {}

  /** Places an order under its ID; an ID placed before, even one whose order has finished, is refused with 409. */
  @Post(":id")
  async place(@Param("id") id: string, @Body(OrderPipe) order: Order): Promise<OrderView> {
    return this.view(await this.checkouts.start(id, order, { idPolicy: { running: "fail", finished: "refuse" } }));
  }

  /** Where an order stands; 404 when no order has the ID. */
  @Get(":id")
  async get(@Param("id") id: string): Promise<OrderView> {
    return this.view(this.checkouts.run(id));
  }

  /**
   * Adds an item before the parcel is packed. An `Idempotency-Key` header makes a retried request
   * return the first one's result instead of adding the item twice.
   */
  @Post(":id/items")
  async addItem(@Param("id") id: string, @Body() line: Line, @Headers("idempotency-key") key?: string): Promise<PricedLine> {
    try {
      return await this.checkouts.run(id).updates.addItem(line, key === undefined ? undefined : { id: key });
    } catch (e) {
      if (e instanceof OutOfStockError) throw new UnprocessableEntityException(e.message);
      throw e;
    }
  }

  /** The warehouse reports the order packed. */
  @Post(":id/packed")
  @HttpCode(202)
  async packed(@Param("id") id: string): Promise<void> {
    await this.checkouts.run(id).signals.markPacked();
  }

  private async view(run: CheckoutRun): Promise<OrderView> {
    const { status } = await run.status();
    if (status === "ok") return { id: run.id, status, receipt: await run.result() };
    if (status === "failed" || status === "cancelled" || status === "terminated") {
      const error = await run.result().then(
        () => undefined,
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
      return { id: run.id, status, ...(error !== undefined ? { error } : {}) };
    }
    return { id: run.id, status, progress: await run.queries.progress() };
  }
}
