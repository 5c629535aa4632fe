import { expect } from "chai";
import { shardOf } from "../../src/core/ids.js";
import { holders, useClusterPair } from "./support/cluster.js";
import { useSchemas } from "./support/database.js";
import { eventually } from "../support/wait.js";

const SHARDS = 8;
const LEASE_MS = 1_500;
/** Shorter than a takeover, which waits for the dead owner's lease to run out. */
const FORWARD_TIMEOUT_MS = 500;

describe("A call forwarded to an owner killed mid-call, with a forward timeout shorter than a takeover (real processes)", function () {
  this.timeout(60_000);
  const schema = useSchemas();
  const cluster = useClusterPair(schema, { shards: SHARDS, leaseMs: LEASE_MS });

  it("fails with a ForwardTimeoutError that names the shard, and the asking process goes on serving its own shards", async () => {
    const name = schema();
    const a = await cluster.spawn("A", name, { FUSEE_TEST_FORWARD_TIMEOUT_MS: String(FORWARD_TIMEOUT_MS) });
    // B kills itself once it performed a forwarded signal, before it answers.
    const b = await cluster.spawn("B", name, { FUSEE_TEST_CRASH_AFTER_PERFORM: "signal" });
    await eventually(
      "the shards to split evenly",
      async () => {
        const h = await holders(name);
        return h.filter((o) => o === "A").length === SHARDS / 2 && h.filter((o) => o === "B").length === SHARDS / 2;
      },
      15_000,
    );
    const owners = await holders(name);
    const idOf = (owner: string): string =>
      Array.from({ length: 64 }, (_, i) => `mid-call-${i}`).find((id) => owners[shardOf(id, SHARDS)] === owner)!;
    const [ofA, ofB] = [idOf("A"), idOf("B")];
    await b.send({ op: "start", id: ofB, input: { n: 1, wait: true, stepMs: 5 } });
    await a.send({ op: "start", id: ofA, input: { n: 1, wait: true, stepMs: 5 } });
    await eventually("both runs to wait for their signal", async () => {
      const statuses = await Promise.all([
        a.send<{ status: string } | null>({ op: "status", id: ofA }),
        b.send<{ status: string } | null>({ op: "status", id: ofB }),
      ]);
      return statuses.every((s) => s?.status === "suspended");
    });

    const failed = await a.send({ op: "signal", id: ofB, by: "A" }).then(
      () => undefined,
      (e: Error) => e,
    );
    await b.exited;
    expect(b.process.signalCode, "B killed itself after performing the signal").to.equal("SIGKILL");
    expect(failed?.name).to.equal("ForwardTimeoutError");
    expect(failed?.message).to.include(`of shard ${shardOf(ofB, SHARDS)} `);

    await a.send({ op: "signal", id: ofA, by: "A" });
    expect(await a.send<string>({ op: "result", id: ofA }), "a run of the asking process's own shard").to.equal("11 by A");
    expect(a.process.exitCode, "the asking process is still running").to.equal(null);
  });
});
