import "reflect-metadata";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { OutOfStockError } from "../src/errors.js";
import { InventoryService } from "../src/services/inventory-service.js";
import { Ledger } from "../src/services/ledger.js";
import { PAYMENTS_FILE, PaymentService } from "../src/services/payment-service.js";
import { ServiceSettings } from "../src/services/settings.js";

describe("services", () => {
  let dir: string;
  const settings = (): ServiceSettings => new ServiceSettings({ dir, latencyMs: 0, paymentGlitches: false });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "orders-services-"));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  describe("PaymentService", () => {
    it("moves money once per idempotency key, also in a new process", async () => {
      const first = await new PaymentService(settings()).charge("k-1", "order-1", 500, "order");
      const restarted = new PaymentService(settings());
      expect(await restarted.charge("k-1", "order-1", 500, "order")).to.deep.equal(first);
      await restarted.charge("k-2", "order-1", 300, "extras");
      expect(restarted.entries().map((e) => e.key)).to.deep.equal(["k-1", "k-2"]);
    });
  });

  describe("InventoryService", () => {
    it("reserves all lines or none and gives a reservation back once", async () => {
      const inventory = new InventoryService(new ServiceSettings({ dir, latencyMs: 0, stock: { mug: 2 } }));
      const error = await inventory
        .reserve("r-1", "order-1", [
          { sku: "tea", qty: 1 },
          { sku: "mug", qty: 3 },
        ])
        .catch((e: unknown) => e);
      expect(error).to.be.instanceOf(OutOfStockError);
      expect([inventory.available("tea"), inventory.available("mug")]).to.deep.equal([200, 2]);
      await inventory.reserve("r-2", "order-1", [{ sku: "mug", qty: 2 }]);
      await inventory.release("x-1", "order-1", "r-2");
      await inventory.release("x-2", "order-1", "r-2");
      expect(inventory.available("mug")).to.equal(2);
      expect(new InventoryService(new ServiceSettings({ dir, latencyMs: 0, stock: { mug: 2 } })).available("mug")).to.equal(2);
    });
  });

  describe("Ledger", () => {
    it("drops a partial last line left by a killed process and appends after it cleanly", async () => {
      await new PaymentService(settings()).charge("k-1", "order-1", 500, "order");
      const file = join(dir, PAYMENTS_FILE);
      appendFileSync(file, '{"key":"k-2","kind":"cha');
      const ledger = new Ledger<{ key: string }>(file);
      expect(ledger.entries().map((e) => e.key)).to.deep.equal(["k-1"]);
      ledger.append({ key: "k-3" });
      expect(
        readFileSync(file, "utf8")
          .trim()
          .split("\n")
          .map((l) => (JSON.parse(l) as { key: string }).key),
      ).to.deep.equal(["k-1", "k-3"]);
    });
  });
});
