import "reflect-metadata";
import type { TestingModule } from "@nestjs/testing";
import { Test } from "@nestjs/testing";
import { expect } from "chai";
import { VirtualClock } from "@fusee/runtime/testing";
import { FuseeTestingModule } from "@fusee/nestjs/testing";
import {
  InventoryService,
  OutOfStockError,
  PackingTimeoutError,
  PaymentService,
  ServiceSettings,
  ShippingService,
} from "fusee-example-orders";
import { CheckoutClient } from "../../src/fusee.generated.js";
import { Checkout } from "../../src/orders/checkout.workflow.js";
import { tempDir } from "../support/temp-dir.js";

const ORDER = { customer: "ada", lines: [{ sku: "kettle", qty: 1 }] };
const KETTLE = 4999;

describe("Checkout", () => {
  let dir: ReturnType<typeof tempDir>;
  let moduleRef: TestingModule;

  beforeEach(async () => {
    dir = tempDir("checkout");
    moduleRef = await Test.createTestingModule({
      imports: [FuseeTestingModule.forRoot({ clients: [CheckoutClient] })],
      providers: [
        Checkout,
        PaymentService,
        InventoryService,
        ShippingService,
        {
          provide: ServiceSettings,
          useValue: new ServiceSettings({ dir: dir.path, latencyMs: 0, shippingFailures: 0, paymentGlitches: false }),
        },
      ],
    }).compile();
    await moduleRef.init();
  });

  afterEach(async () => {
    await moduleRef.close();
    dir.remove();
  });

  describe("run", () => {
    it("should refund the charge and release the stock when the warehouse does not pack within an hour", async () => {
      const run = await moduleRef.get(CheckoutClient).start("o-1", ORDER);
      const clock = moduleRef.get(VirtualClock);
      await clock.advance("59m");
      expect((await run.queries.progress()).stage).to.equal("packing");
      await clock.advance("1m");

      const error = await run.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.an.instanceOf(PackingTimeoutError);
      const payments = moduleRef.get(PaymentService).entries();
      expect(payments.map((p) => [p.kind, p.cents])).to.deep.equal([
        ["charge", KETTLE],
        ["refund", KETTLE],
      ]);
      expect(moduleRef.get(InventoryService).available("kettle")).to.equal(100);
    });

    it("should ship once the warehouse reports the order packed", async () => {
      const run = await moduleRef.get(CheckoutClient).start("o-1", ORDER);
      await moduleRef.get(VirtualClock).advance("10m");
      await run.signals.markPacked();
      const receipt = await run.result();
      expect(receipt).to.include({ orderId: "o-1", totalCents: KETTLE });
      expect(moduleRef.get(InventoryService).available("kettle")).to.equal(99);
    });
  });

  describe("addItem", () => {
    it("should fail an item out of stock with OutOfStockError and leave the order as it was", async () => {
      const run = await moduleRef.get(CheckoutClient).start("o-1", ORDER);
      await moduleRef.get(VirtualClock).advance("1s");
      const error = await run.updates.addItem({ sku: "gift-wrap", qty: 4 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.an.instanceOf(OutOfStockError);
      expect(await run.queries.progress()).to.include({ stage: "packing", totalCents: KETTLE });
      await run.signals.markPacked();
      expect((await run.result()).totalCents).to.equal(KETTLE);
    });
  });
});
