/** What the shop sells: price in cents and the stock the warehouse starts with. */
export interface Product {
  readonly name: string;
  readonly cents: number;
  readonly stock: number;
}

/**
 * The catalogue. Stock is ample for the demo batch except for gift wrap, which runs out part-way
 * through so that some add-item updates fail on stock.
 */
export const CATALOG: Readonly<Record<string, Product>> = {
  mug: { name: "Mug", cents: 1200, stock: 100 },
  teapot: { name: "Teapot", cents: 3490, stock: 100 },
  tea: { name: "Loose-leaf tea", cents: 850, stock: 200 },
  kettle: { name: "Kettle", cents: 4999, stock: 100 },
  coaster: { name: "Coaster", cents: 350, stock: 400 },
  "gift-wrap": { name: "Gift wrap", cents: 299, stock: 3 },
};

export type Sku = keyof typeof CATALOG & string;

/** The most of one product a line may hold. */
export const MAX_QTY = 5;

export function isSku(sku: unknown): sku is Sku {
  return typeof sku === "string" && Object.prototype.hasOwnProperty.call(CATALOG, sku);
}

/** Formats cents as dollars: `1234` → `"$12.34"`. */
export function money(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}
