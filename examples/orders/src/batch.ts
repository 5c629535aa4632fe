import type { Line, Order, PackedReport } from "./model.js";

const SHELF = ["mug", "teapot", "tea", "kettle", "coaster"] as const;

/** The ID of the n-th order of the batch. */
export function orderId(n: number): string {
  return `order-${n}`;
}

/**
 * What happens to the n-th order of the demo batch. Everything derives from `n`, so a restarted
 * batch asks for exactly what the first attempt asked for.
 */
export interface OrderScript {
  readonly id: string;
  readonly order: Order;
  /** Added through the `addItem` update while the parcel waits to be packed. */
  readonly extra?: Line;
  /** A malformed or unknown item the validator must refuse. */
  readonly bad?: Line;
  /** How long the warehouse takes to pack, from when it sees the order waiting. */
  readonly packAfterMs: number;
  readonly report: PackedReport;
}

export function scriptFor(n: number): OrderScript {
  const lines: Line[] = [{ sku: SHELF[n % SHELF.length] as string, qty: 1 + (n % 2) }];
  if (n % 3 !== 1) lines.push({ sku: SHELF[(n + 2) % SHELF.length] as string, qty: 1 });
  const second = lines[1];
  return {
    id: orderId(n),
    order: { customer: `customer-${(n * 7) % 13}`, lines },
    ...(n % 4 === 0 ? { extra: { sku: "gift-wrap", qty: 1 } } : {}),
    ...(n % 10 === 5 ? { bad: { sku: "unicorn", qty: 1 } } : n % 10 === 0 ? { bad: { sku: "mug", qty: 9 } } : {}),
    packAfterMs: 250 + ((n * 397) % 2000),
    // The warehouse cannot find the second line of every sixth order; that line is refunded.
    report: n % 6 === 3 && second !== undefined ? { missing: [second.sku] } : {},
  };
}
