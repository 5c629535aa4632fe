import { expect } from "chai";
import { SYSTEM_STREAM_PREFIX, shardOf } from "../../src/core/ids.js";
import { holders, useClusterPair } from "./support/cluster.js";
import { useSchemas } from "./support/database.js";

const SHARDS = 8;
const LEASE_MS = 1_000;

/**
 * A call on a schedule or a window that another process's shard holds is forwarded to that
 * process. When it dies after performing the call and before answering, the shard's next owner
 * answers the request: it must find the call performed, not perform it a second time.
 */
describe("a forwarded call on a schedule or a batch whose owner dies after performing it and before answering (real processes)", function () {
  this.timeout(60_000);
  const schema = useSchemas();
  const cluster = useClusterPair(schema, { shards: SHARDS, leaseMs: LEASE_MS });

  /** A name whose stream of `family` lives on one of B's shards. */
  async function nameOnB(name: string, family: "schedule" | "batch", prefix: string): Promise<string> {
    const owners = await holders(name);
    return Array.from({ length: 64 }, (_, i) => `${prefix}-${i}`).find(
      (n) => owners[shardOf(`${SYSTEM_STREAM_PREFIX}${family}/${n}`, SHARDS)] === "B",
    ) as string;
  }

  it("triggers a schedule once: the schedule counts one run and has one", async () => {
    const [a, b, name] = await cluster.start({ FUSEE_TEST_CRASH_AFTER_PERFORM: "scheduleOp" });
    const schedule = await nameOnB(name, "schedule", "hourly");
    const spec = { workflow: "cluster-echo", every: "1h", overlap: "allow-all", paused: true };
    await b.send({ op: "schedule", name: schedule, spec });

    await a.send({ op: "schedule", name: schedule, spec, then: "trigger" });
    expect(b.process.signalCode, "B killed itself after performing the trigger").to.equal("SIGKILL");
    const described = await a.send<{ started: number; recentRuns: string[] }>({ op: "schedule", name: schedule, spec, then: "describe" });
    expect(described.recentRuns, "the schedule's runs").to.have.length(1);
    expect(described.started).to.equal(1);
  });

  it("takes a batch's event once: the batch's run gets it once", async () => {
    const [a, b, name] = await cluster.start({ FUSEE_TEST_CRASH_AFTER_PERFORM: "batch" });
    const key = await nameOnB(name, "batch", "tenant");

    const id = await a.send<string>({ op: "batch", key, event: { sku: "a" }, size: 10, timeout: "1s" });
    expect(b.process.signalCode, "B killed itself after taking the event").to.equal("SIGKILL");
    expect(await a.send({ op: "result", id })).to.deep.equal([{ sku: "a" }]);
  });
});
