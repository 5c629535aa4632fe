import "reflect-metadata";
import type { INestApplication } from "@nestjs/common";
import { Test } from "@nestjs/testing";
import { expect } from "chai";
import { Ledger, type PaymentEntry } from "fusee-example-orders";
import { join } from "node:path";
import { AppModule } from "../../src/app.module.js";
import { AppSettings } from "../../src/settings.js";
import { call } from "../support/http.js";
import { tempDir } from "../support/temp-dir.js";

const ORDER = {
  customer: "ada",
  lines: [
    { sku: "teapot", qty: 1 },
    { sku: "tea", qty: 2 },
  ],
};

/** The application on `dir`, listening on a free port of 127.0.0.1. */
async function start(dir: string): Promise<{ app: INestApplication; url: string }> {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(AppSettings)
    .useValue(new AppSettings(dir, 0, "127.0.0.1", { latencyMs: 0, shippingFailures: 1, paymentGlitches: false }))
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, "127.0.0.1");
  return { app, url: await app.getUrl() };
}

/** Polls the order until it has finished. */
async function finished(url: string, id: string): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const { body } = await call(url, "GET", `/orders/${id}`);
    if (!["running", "suspended", "parked"].includes(body.status)) return body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`order ${id} did not finish`);
}

describe("OrdersController", () => {
  let dir: ReturnType<typeof tempDir>;
  let app: INestApplication;
  let url: string;

  beforeEach(async () => {
    dir = tempDir("http");
    ({ app, url } = await start(dir.path));
  });

  afterEach(async () => {
    await app.close();
    dir.remove();
  });

  const charges = (): PaymentEntry[] =>
    Ledger.read<PaymentEntry>(join(dir.path, "services", "payments.jsonl")).filter((e) => e.kind === "charge");

  describe("place", () => {
    it("should start the order's checkout and answer with its progress", async () => {
      const { status, body } = await call(url, "POST", "/orders/o-1", ORDER);
      expect(status).to.equal(201);
      expect(body).to.include({ id: "o-1" });
      expect(body.progress.stage).to.be.a("string");
    });

    it("should refuse an ID placed before with 409, also once its order has finished", async () => {
      await call(url, "POST", "/orders/o-1", ORDER);
      expect((await call(url, "POST", "/orders/o-1", ORDER)).body).to.include({ statusCode: 409, code: "FUSEE_ALREADY_EXISTS" });
      await call(url, "POST", "/orders/o-1/packed");
      expect((await finished(url, "o-1")).status).to.equal("ok");
      expect((await call(url, "POST", "/orders/o-1", ORDER)).status).to.equal(409);
    });

    it("should refuse a malformed order with 400", async () => {
      const { status, body } = await call(url, "POST", "/orders/o-1", { customer: "ada", lines: [{ sku: "unicorn", qty: 1 }] });
      expect(status).to.equal(400);
      expect(body.message).to.equal('unknown SKU "unicorn"');
    });
  });

  describe("get", () => {
    it("should answer 404 with the error's code for an order that was never placed", async () => {
      expect(await call(url, "GET", "/orders/o-404")).to.deep.equal({
        status: 404,
        body: { statusCode: 404, code: "FUSEE_NOT_FOUND", message: "no workflow run has the ID 'o-404'" },
      });
    });
  });

  describe("addItem", () => {
    it("should price and reserve an item once per Idempotency-Key, and charge it after packing", async () => {
      await call(url, "POST", "/orders/o-1", ORDER);
      const first = await call(url, "POST", "/orders/o-1/items", { sku: "mug", qty: 2 }, { "idempotency-key": "add-mug" });
      const again = await call(url, "POST", "/orders/o-1/items", { sku: "mug", qty: 2 }, { "idempotency-key": "add-mug" });
      expect(first).to.deep.equal({ status: 201, body: { sku: "mug", qty: 2, cents: 2400 } });
      expect(again).to.deep.equal(first);
      await call(url, "POST", "/orders/o-1/packed");
      const { receipt } = await finished(url, "o-1");
      expect(receipt.totalCents).to.equal(3490 + 2 * 850 + 2400);
      expect(charges().map((c) => [c.purpose, c.cents])).to.deep.equal([
        ["order", 3490 + 2 * 850],
        ["extras", 2400],
      ]);
    });

    it("should answer 400 for a malformed item, and 422 for an unknown product, one out of stock or a finished order", async () => {
      await call(url, "POST", "/orders/o-1", ORDER);
      const malformed = await call(url, "POST", "/orders/o-1/items", { sku: "mug" });
      expect(malformed.status).to.equal(400);
      expect(malformed.body.message).to.contain("needs a sku (a string) and a qty (a whole number)");
      expect(await call(url, "POST", "/orders/o-1/items", { sku: "unicorn", qty: 1 })).to.deep.equal({
        status: 422,
        body: { statusCode: 422, code: "FUSEE_REJECTED", message: 'unknown SKU "unicorn" for o-1' },
      });
      const outOfStock = await call(url, "POST", "/orders/o-1/items", { sku: "gift-wrap", qty: 4 });
      expect(outOfStock.status).to.equal(422);
      expect(outOfStock.body.message).to.equal("gift-wrap is out of stock for o-1: 4 wanted, 3 left");
      await call(url, "POST", "/orders/o-1/packed");
      await finished(url, "o-1");
      expect((await call(url, "POST", "/orders/o-1/items", { sku: "mug", qty: 1 })).status).to.equal(422);
    });
  });

  describe("packed", () => {
    it("should ship the packed order and show its receipt", async () => {
      await call(url, "POST", "/orders/o-1", ORDER);
      expect((await call(url, "POST", "/orders/o-1/packed")).status).to.equal(202);
      const order = await finished(url, "o-1");
      expect(order.status).to.equal("ok");
      expect(order.receipt).to.include({ orderId: "o-1", totalCents: 3490 + 2 * 850 });
      expect(order.receipt.trackingNo).to.match(/^TRK/);
    });

    it("should finish an order placed before a restart of the application on the same data directory", async () => {
      await call(url, "POST", "/orders/o-1", ORDER);
      await call(url, "POST", "/orders/o-1/items", { sku: "coaster", qty: 4 });
      await app.close();

      ({ app, url } = await start(dir.path));
      const { body } = await call(url, "GET", "/orders/o-1");
      expect(body.progress).to.include({ stage: "packing", totalCents: 3490 + 2 * 850 + 4 * 350 });
      await call(url, "POST", "/orders/o-1/packed");
      expect((await finished(url, "o-1")).receipt.totalCents).to.equal(3490 + 2 * 850 + 4 * 350);
      expect(
        charges().map((c) => c.cents),
        "each charge made once",
      ).to.deep.equal([3490 + 2 * 850, 4 * 350]);
    });
  });
});
