import "reflect-metadata";
import { expect } from "chai";
import { Config, ConfigError, Engine, StorageError } from "../../src/index.js";
import { type Child, killHard, startChild } from "../storage/support/child.js";
import { PG_URL, storedEntries, useSchemas } from "./support/database.js";
import { calls, PgOrder } from "./support/order-workflow.js";
import { eventually } from "../support/wait.js";

const WORKER = new URL("./fixtures/engine-worker.js", import.meta.url);

describe("Engine on Config.postgres", () => {
  const schema = useSchemas();
  let engines: Engine[] = [];
  let child: Child | undefined;
  const open = async (name: string, leaseMs?: number): Promise<Engine> => {
    const engine = await Engine.open(Config.postgres(PG_URL, { schema: name, ...(leaseMs ? { leaseMs } : {}) }).shards(2), {
      workflows: [PgOrder],
    });
    engines.push(engine);
    return engine;
  };
  beforeEach(() => {
    calls.length = 0;
  });
  afterEach(async () => {
    if (child !== undefined) await killHard(child);
    child = undefined;
    for (const e of engines) await e.shutdown();
    engines = [];
  });

  it("runs a workflow with steps, a signal and a timer across restarts, each step once", async () => {
    const name = schema();
    let engine = await open(name);
    await engine.start(PgOrder, "order-1", 21);
    await eventually("the run to wait for approval", async () => (await engine.status("order-1"))?.status === "suspended");
    await engine.shutdown();

    engine = await open(name);
    await eventually("the run to resume", async () => (await engine.status("order-1"))?.status === "suspended");
    await engine.run("order-1").signal("approve", "ann");
    expect(await engine.run("order-1").query("approver")).to.equal("ann");
    await engine.shutdown();

    engine = await open(name);
    expect(await engine.run<string>("order-1").result()).to.equal("charged 42, approved by ann");
    expect(calls).to.deep.equal(["quote 21", "charge 42"]);
    const detail = await engine.describe("order-1");
    expect(detail?.journal.map((r) => r.kind)).to.deep.equal(["start", "step", "signal", "timer", "fired", "step", "finish"]);
    expect(await storedEntries(name)).to.have.length.of.at.least(7);
  });

  it("refuses a missing URL or a schema name that is not a plain identifier when the config is built", () => {
    expect(() => Config.postgres("")).to.throw(ConfigError, "connection URL");
    expect(() => Config.postgres(PG_URL, { schema: "Orders-Prod" })).to.throw(ConfigError, '"Orders-Prod" is not valid');
  });

  it("refuses a second engine on the schema while the first runs, naming the holder", async () => {
    const name = schema();
    await open(name, 1_000);
    const err = await open(name, 1_000).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message).to.contain("another process is using it");
  });

  it("resumes the runs of an engine that was SIGKILLed once its leases expire", async () => {
    const name = schema();
    child = startChild(WORKER, [PG_URL, name, "500"]);
    await child.ready;
    await killHard(child);
    child = undefined;

    const startedAt = Date.now();
    const engine = await open(name, 500);
    expect(Date.now() - startedAt).to.be.below(3_000);
    await engine.run("order-k").signal("approve", "kim");
    expect(await engine.run<string>("order-k").result()).to.equal("charged 14, approved by kim");
    expect(calls, "the step journaled before the crash does not run again").to.deep.equal(["charge 14"]);
  });
});
