import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { RejectedError, type JournalRecord } from "@fusee/runtime";
import { TestEngine } from "@fusee/runtime/testing";
import { CarrierUnavailableError, OutOfStockError, PackingTimeoutError } from "../src/errors.js";
import { Fulfilment } from "../src/fulfilment.js";
import { FulfilmentClient, type FulfilmentRun } from "../src/fusee.generated.js";
import "../src/fusee.workflows.generated.js";
import type { Line, Order } from "../src/model.js";
import { servicesContainer } from "../src/services/container.js";
import { InventoryService } from "../src/services/inventory-service.js";
import { PaymentService, type PaymentEntry } from "../src/services/payment-service.js";
import type { ServiceSettingsInit } from "../src/services/settings.js";

const ORDER: Order = {
  customer: "ada",
  lines: [
    { sku: "teapot", qty: 1 },
    { sku: "tea", qty: 2 },
  ],
};
const TEAPOT = 3490;
const TEA = 850;

interface World {
  engine: TestEngine;
  fulfilment: FulfilmentClient;
  payments: PaymentService;
  inventory: InventoryService;
}

describe("Fulfilment", () => {
  let dir: string;
  let world: World;

  async function open(settings: Partial<ServiceSettingsInit> = {}): Promise<World> {
    const container = servicesContainer({ dir, latencyMs: 0, shippingFailures: 0, paymentGlitches: false, ...settings });
    const engine = await TestEngine.create({ workflows: [Fulfilment], container });
    world = {
      engine,
      fulfilment: new FulfilmentClient(engine),
      payments: container.resolve(PaymentService),
      inventory: container.resolve(InventoryService),
    };
    return world;
  }

  /** Advances the virtual clock in small steps until `check` holds. */
  async function until(check: () => Promise<boolean>, what: string): Promise<void> {
    for (let i = 0; i < 400; i++) {
      if (await check()) return;
      await world.engine.clock.advance("50ms");
    }
    throw new Error(`timed out waiting until ${what}`);
  }

  const stageOf = async (run: FulfilmentRun): Promise<string> => (await run.queries.progress()).stage;
  const finished = async (run: FulfilmentRun): Promise<boolean> => ["ok", "failed"].includes((await run.status()).status);

  async function startAndWaitForPacking(id: string, order: Order = ORDER): Promise<FulfilmentRun> {
    const run = await world.fulfilment.start(id, order);
    await until(async () => (await stageOf(run)) === "packing", `${id} waits for packing`);
    return run;
  }

  async function finish(run: FulfilmentRun): Promise<void> {
    await until(() => finished(run), `${run.id} finishes`);
  }

  const ledgerOf = (id: string): readonly PaymentEntry[] => world.payments.entries().filter((e) => e.orderId === id);
  const netPaid = (id: string): number => ledgerOf(id).reduce((t, e) => t + (e.kind === "charge" ? e.cents : -e.cents), 0);
  const stepRecords = async (run: FulfilmentRun, name: string) =>
    (await run.describe()).journal.filter((r): r is Extract<JournalRecord, { kind: "step" }> => r.kind === "step" && r.name === name);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "orders-test-"));
  });

  afterEach(async () => {
    await world?.engine.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("run", () => {
    it("reserves, charges, waits for packing, cools off, ships and returns a receipt", async () => {
      await open();
      const run = await startAndWaitForPacking("order-1");
      expect(ledgerOf("order-1").map((e) => [e.kind, e.purpose, e.cents])).to.deep.equal([["charge", "order", TEAPOT + 2 * TEA]]);
      expect(world.inventory.available("teapot")).to.equal(99);

      await run.signals.packed({});
      await until(async () => (await stageOf(run)) === "cooling-off", "the cooling-off pause starts");
      await world.engine.clock.advance("100ms");
      expect(await stageOf(run)).to.equal("cooling-off");
      await finish(run);

      const receipt = await run.result();
      expect(receipt).to.include({ orderId: "order-1", chargedCents: 5190, refundedCents: 0, totalCents: 5190, retries: 0 });
      expect(receipt.shipped.map((l) => l.sku)).to.deep.equal(["teapot", "tea"]);
      expect(receipt.trackingNo).to.match(/^TRK[0-9A-Z]{7}$/);
      expect(netPaid("order-1")).to.equal(5190);
    });

    it("retries the flaky shipping call and ships on a later attempt", async () => {
      await open({ shippingFailures: 1 });
      const run = await startAndWaitForPacking("order-2");
      await run.signals.packed({});
      await finish(run);

      const receipt = await run.result();
      expect(receipt.retries).to.equal(1);
      const ship = await stepRecords(run, "ship");
      expect(ship.map((s) => [s.ok, s.attempts])).to.deep.equal([[true, 2]]);
    });

    it("refuses a misspelled signal sent through the untyped handle, since the workflow declares its mailboxes", async () => {
      await open();
      const run = await startAndWaitForPacking("order-typo");
      const error = await run.handle.signal("pakced", {}).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(RejectedError);
      expect((error as Error).message)
        .to.contain("takes no signal 'pakced'")
        .and.contain("'packed'");
      await run.signals.packed({});
      await finish(run);
      expect((await run.status()).status).to.equal("ok");
    });

    it("retries a charge the gateway dropped without charging twice", async () => {
      // With glitches on, a charge whose key hashes to 0 mod 4 fails its first attempt; look for one.
      await open({ paymentGlitches: true });
      const runs: FulfilmentRun[] = [];
      for (let n = 1; n <= 8; n++) runs.push(await startAndWaitForPacking(`glitch-${n}`));
      const charges = await Promise.all(runs.map((r) => stepRecords(r, "charge")));
      const retried = charges.filter((c) => c[0]?.attempts === 2);
      expect(retried.length).to.be.greaterThan(0);
      for (const run of runs) expect(ledgerOf(run.id).filter((e) => e.kind === "charge")).to.have.length(1);
    });

    it("refunds and releases the stock when shipping never succeeds", async () => {
      await open({ shippingFailures: Infinity });
      const run = await startAndWaitForPacking("order-3");
      await run.signals.packed({});
      await finish(run);

      const error = await run.result().catch((e: unknown) => e);
      expect(error).to.be.instanceOf(CarrierUnavailableError);
      expect((await stepRecords(run, "ship"))[0]?.attempts).to.equal(4);
      expect(netPaid("order-3")).to.equal(0);
      expect(world.inventory.available("teapot")).to.equal(100);
    });

    it("refunds a line the warehouse cannot find and ships the rest", async () => {
      await open();
      const run = await startAndWaitForPacking("order-4");
      await run.signals.packed({ missing: ["tea"] });
      await finish(run);

      const receipt = await run.result();
      expect(receipt).to.include({ chargedCents: 5190, refundedCents: 2 * TEA, totalCents: TEAPOT });
      expect(receipt.missing.map((l) => l.sku)).to.deep.equal(["tea"]);
      expect(ledgerOf("order-4").map((e) => e.kind)).to.deep.equal(["charge", "refund"]);
    });

    it("fails without charging when a product is out of stock", async () => {
      await open({ stock: { teapot: 0 } });
      const run = await world.fulfilment.start("order-5", ORDER);
      await finish(run);

      const error = await run.result().catch((e: unknown) => e);
      expect(error).to.be.instanceOf(OutOfStockError);
      expect((error as Error).message)
        .to.contain("teapot")
        .and.contain("order-5");
      expect((await stepRecords(run, "reserve")).map((s) => s.attempts)).to.deep.equal([1]);
      expect(ledgerOf("order-5")).to.deep.equal([]);
    });

    it("cancels and refunds an order the warehouse does not pack within the hour", async () => {
      await open();
      const run = await startAndWaitForPacking("order-6");
      await world.engine.clock.advance("59m");
      expect(await stageOf(run)).to.equal("packing");
      await world.engine.clock.advance("1m");
      await finish(run);

      expect(await run.result().catch((e: unknown) => e)).to.be.instanceOf(PackingTimeoutError);
      expect(netPaid("order-6")).to.equal(0);
      expect(world.inventory.available("tea")).to.equal(200);
    });
  });

  describe("progress", () => {
    it("reports the stage, the items and whether the parcel is packed", async () => {
      await open();
      const run = await startAndWaitForPacking("order-7");
      expect(await run.queries.progress()).to.deep.equal({
        stage: "packing",
        items: [
          { sku: "teapot", qty: 1, cents: TEAPOT },
          { sku: "tea", qty: 2, cents: 2 * TEA },
        ],
        packed: false,
        totalCents: TEAPOT + 2 * TEA,
      });
      await run.signals.packed({});
      await until(async () => (await run.queries.progress()).packed, "the query reports the parcel packed");
      await finish(run);
      expect(await stageOf(run)).to.equal("shipped");
    });
  });

  describe("addItem", () => {
    it("prices the item through a step, reserves it and charges it after packing", async () => {
      await open();
      const run = await startAndWaitForPacking("order-8");
      const line = await run.updates.addItem({ sku: "gift-wrap", qty: 2 }, { id: "add-1" });
      expect(line).to.deep.equal({ sku: "gift-wrap", qty: 2, cents: 598 });
      expect(await stepRecords(run, "quote")).to.have.length(2);
      expect(world.inventory.available("gift-wrap")).to.equal(1);
      expect((await run.queries.progress()).totalCents).to.equal(5190 + 598);

      expect(await run.updates.addItem({ sku: "gift-wrap", qty: 2 }, { id: "add-1" })).to.deep.equal(line);
      expect(world.inventory.available("gift-wrap")).to.equal(1);

      await run.signals.packed({});
      await finish(run);
      expect((await run.result()).totalCents).to.equal(5190 + 598);
      expect(ledgerOf("order-8").map((e) => [e.purpose, e.cents])).to.deep.equal([
        ["order", 5190],
        ["extras", 598],
      ]);
    });

    it("rejects unknown products, bad quantities and items for a packed order, recording nothing", async () => {
      await open();
      const run = await startAndWaitForPacking("order-9");
      const journalBefore = (await run.describe()).journal.length;
      for (const [item, says] of [
        [{ sku: "unicorn", qty: 1 }, 'unknown SKU "unicorn"'],
        [{ sku: "mug", qty: 0 }, "whole number from 1 to 5"],
        [{ sku: "mug", qty: 1.5 }, "whole number from 1 to 5"],
        ["mug", "needs a sku and a qty"],
      ] as const) {
        const error = await run.updates.addItem(item as unknown as Line).catch((e: unknown) => e);
        expect(error, JSON.stringify(item)).to.be.instanceOf(RejectedError);
        expect((error as Error).message)
          .to.contain(says)
          .and.contain("order-9");
      }
      expect((await run.describe()).journal.length).to.equal(journalBefore);

      await run.signals.packed({});
      await until(async () => (await run.queries.progress()).packed, "the parcel is packed");
      const late = await run.updates.addItem({ sku: "mug", qty: 1 }).catch((e: unknown) => e);
      expect(late).to.be.instanceOf(RejectedError);
      expect((late as Error).message).to.contain("already packed");
      await finish(run);
      expect((await run.result()).shipped).to.have.length(2);
    });

    it("fails the update, not the order, when the added item is out of stock", async () => {
      await open({ stock: { "gift-wrap": 0 } });
      const run = await startAndWaitForPacking("order-10");
      const error = await run.updates.addItem({ sku: "gift-wrap", qty: 1 }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(OutOfStockError);
      await run.signals.packed({});
      await finish(run);
      expect((await run.result()).totalCents).to.equal(5190);
    });
  });
});
