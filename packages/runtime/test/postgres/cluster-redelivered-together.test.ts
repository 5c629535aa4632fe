import { expect } from "chai";
import { shardOf } from "../../src/core/ids.js";
import { holders, useClusterPair } from "./support/cluster.js";
import { useSchemas } from "./support/database.js";
import { eventually } from "../support/wait.js";

const SHARDS = 8;
const LEASE_MS = 1_000;
const TAGS = 16;

describe("forwarded requests a dead owner performed, answered together by the next owner (real processes)", function () {
  this.timeout(60_000);
  const schema = useSchemas();
  const cluster = useClusterPair(schema, { shards: SHARDS, leaseMs: LEASE_MS });

  it("applies each signal once, though the next owner asks about all of them while it still reads the run's journal", async () => {
    // B dies after performing the first forwarded signal; the others were performed with it or not at all.
    const [a, b, name] = await cluster.start({ FUSEE_TEST_CRASH_AFTER_PERFORM: "signal" });
    const owners = await holders(name);
    const id = Array.from({ length: 64 }, (_, i) => `together-${i}`).find((c) => owners[shardOf(c, SHARDS)] === "B") as string;
    await b.send({ op: "startType", type: "cluster-tally", id, input: null });

    const tags = Array.from({ length: TAGS }, (_, i) => `t${i}`);
    const acked = await a.send<string[]>({ op: "add", id, tags });
    expect(b.process.signalCode, "B killed itself after performing a signal").to.equal("SIGKILL");
    expect(acked, "every signal is acknowledged once A answers what B left").to.deep.equal(tags);

    let recorded: string[] | null = null;
    await eventually(
      "A to read the run",
      async () => (recorded = await a.send<string[] | null>({ op: "tags", id }).catch(() => null)) !== null,
      20_000,
    );
    expect([...(recorded as unknown as string[])].sort(), "the signals in the run's journal").to.deep.equal([...tags].sort());
  });
});
