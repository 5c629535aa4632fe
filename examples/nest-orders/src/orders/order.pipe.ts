import { BadRequestException, Injectable, type PipeTransform } from "@nestjs/common";
import { isSku, MAX_QTY, type Order } from "fusee-example-orders";

/** Checks the body of a new order: a customer and at least one line of a known product. */
@Injectable()
export class OrderPipe implements PipeTransform<unknown, Order> {
  transform(body: unknown): Order {
    const { customer, lines } = (typeof body === "object" && body !== null ? body : {}) as Partial<Order>;
    if (typeof customer !== "string" || customer === "") throw new BadRequestException("an order needs a customer");
    if (!Array.isArray(lines) || lines.length === 0) throw new BadRequestException("an order needs at least one line");
    for (const line of lines as unknown[]) {
      const { sku, qty } = (typeof line === "object" && line !== null ? line : {}) as { sku?: unknown; qty?: unknown };
      if (!isSku(sku)) throw new BadRequestException(`unknown SKU ${JSON.stringify(sku)}`);
      if (typeof qty !== "number" || !Number.isInteger(qty) || qty < 1 || qty > MAX_QTY) {
        throw new BadRequestException(`qty of ${sku} must be a whole number from 1 to ${MAX_QTY}; got ${JSON.stringify(qty)}`);
      }
    }
    return { customer, lines: lines.map(({ sku, qty }) => ({ sku, qty })) };
  }
}
