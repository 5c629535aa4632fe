import "reflect-metadata";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { container as root } from "tsyringe";
import { TestEngine, replayRegressions } from "@fusee/runtime/testing";
import { Billing } from "../src/billing.js";
import { Trial } from "../src/trial.js";

/** A test engine whose workflows get `billing`; crash() and restart() keep both. */
function open(billing: Billing): Promise<TestEngine> {
  const services = root.createChildContainer();
  services.registerInstance(Billing, billing);
  return TestEngine.create({ workflows: [Trial], container: services });
}

describe("Trial", () => {
  let billing: Billing;
  let engine: TestEngine;

  beforeEach(async () => {
    billing = new Billing();
    engine = await open(billing);
  });

  afterEach(() => engine.shutdown());

  it("expires after 30 days when nobody upgrades, charging nothing", async () => {
    const run = await engine.start(Trial, "trial-ann", "ann");
    await engine.clock.advance("29d");
    expect((await run.status()).status).to.equal("suspended");
    await engine.clock.advance("1d");
    expect(await run.result()).to.deep.equal({ status: "expired" });
    expect(billing.calls).to.equal(0);
  });

  it("subscribes a customer who upgrades, charging once through a provider outage", async () => {
    billing.outages = 2;
    const run = await engine.start(Trial, "trial-bob", "bob");
    await engine.clock.advance("3d");
    await run.signal("upgrade", "yearly");
    expect(await run.query("chosenPlan")).to.equal("yearly");
    // Two failed attempts, one and two seconds apart, then the charge goes through.
    await engine.clock.advance("3s");
    const outcome = await run.result();
    expect(outcome).to.deep.include({ status: "subscribed" });
    expect(billing.calls).to.equal(3);
    expect([...billing.charges.values()]).to.deep.equal([
      { key: (outcome as { charge: { key: string } }).charge.key, customer: "bob", cents: 9900 },
    ]);
  });

  it("does not retry a declined card", async () => {
    billing.declined.add("cat");
    const run = await engine.start(Trial, "trial-cat", "cat");
    await run.signal("upgrade", "monthly");
    await engine.idle();
    expect(await run.result()).to.deep.equal({ status: "declined" });
    expect(billing.calls).to.equal(1);
  });

  it("carries on after a crash from what its journal holds, the 30 days counted from the start", async () => {
    await engine.start(Trial, "trial-dan", "dan");
    await engine.clock.advance("20d");
    engine = await engine.crash();
    await engine.clock.advance("9d");
    expect((await engine.status("trial-dan"))?.status).to.be.oneOf(["suspended", "parked"]);
    await engine.clock.advance("1d");
    expect(await engine.run("trial-dan").result()).to.deep.equal({ status: "expired" });
  });

  it("keeps a charge's retry budget across a crash in its back-off", async () => {
    billing.outages = 10;
    const run = await engine.start(Trial, "trial-eve", "eve");
    await run.signal("upgrade", "monthly");
    await engine.idle();
    expect(billing.calls).to.equal(1);
    engine = await engine.crash();
    await engine.clock.advance("1m");
    // Four attempts in all, across the crash: the outage outlasts them and the run fails.
    expect(
      await engine
        .run("trial-eve")
        .result()
        .catch((e: unknown) => (e as Error).message),
    ).to.equal("the payment provider is unavailable");
    expect(billing.calls).to.equal(4);
  });

  describe("journals recorded from earlier runs", () => {
    // Each file is a journal exported by `npm run record-journals`; new code must still replay them.
    replayRegressions(fileURLToPath(new URL("../../test/journals", import.meta.url)), [Trial]);
  });
});
