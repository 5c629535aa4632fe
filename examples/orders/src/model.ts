/** An order line as the customer asked for it. */
export interface Line {
  readonly sku: string;
  readonly qty: number;
}

/** An order line with its price. */
export interface PricedLine extends Line {
  readonly cents: number;
}

/** The input of a `Fulfilment` run; the order's ID is the workflow ID. */
export interface Order {
  readonly customer: string;
  readonly lines: readonly Line[];
}

/** Where an order stands, as the `progress` query reports it. */
export type Stage = "reserving" | "charging" | "packing" | "cooling-off" | "shipping" | "shipped" | "compensating";

export interface Progress {
  readonly stage: Stage;
  /** Every line of the order so far, items added by update included. */
  readonly items: readonly PricedLine[];
  /** True once the warehouse has reported the parcel packed. */
  readonly packed: boolean;
  readonly totalCents: number;
}

/** What the warehouse reports with the `packed` signal. */
export interface PackedReport {
  /** SKUs the warehouse could not find on the shelf; their lines are refunded. */
  readonly missing?: readonly string[];
}

/** The result of a fulfilled order. */
export interface Receipt {
  readonly orderId: string;
  readonly shipped: readonly PricedLine[];
  readonly missing: readonly PricedLine[];
  readonly chargedCents: number;
  readonly refundedCents: number;
  /** What the customer paid in the end: charged minus refunded. */
  readonly totalCents: number;
  readonly trackingNo: string;
  /** Failed attempts of the payment and shipping calls that a retry recovered from. */
  readonly retries: number;
  readonly shippedAt: number;
}
