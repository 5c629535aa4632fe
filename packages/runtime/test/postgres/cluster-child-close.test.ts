import { expect } from "chai";
import { shardOf } from "../../src/core/ids.js";
import { holders, useClusterPair } from "./support/cluster.js";
import { useSchemas } from "./support/database.js";
import { eventually } from "../support/wait.js";

const SHARDS = 8;
const LEASE_MS = 1_000;

describe("A parent's close policy on children in other processes' shards (real processes)", function () {
  this.timeout(60_000);
  const schema = useSchemas();
  const cluster = useClusterPair(schema, { shards: SHARDS, leaseMs: LEASE_MS });

  it("asks each child to cancel once, though the next owner of the ended parent's shard applies the policy again", async () => {
    const [a, b, name] = await cluster.start();
    const c = await cluster.spawn("C", name);
    await eventually("C to hold shards", async () => (await holders(name)).includes("C"), 15_000);
    const owners = await holders(name);
    const on = (owner: string, prefix: string): string =>
      Array.from({ length: 200 }, (_, i) => `${prefix}-${i}`).find((id) => owners[shardOf(id, SHARDS)] === owner) as string;
    // Whichever of B and C takes the parent's shard over from A, one child is in the other's shard.
    const parent = on("A", "closer");
    const children = [on("B", "stubborn-b"), on("C", "stubborn-c")];
    await a.send({ op: "startType", type: "cluster-closer", id: parent, input: children });
    await a.send({ op: "result", id: parent });
    const cancels = async (id: string): Promise<number> =>
      (await b.send<{ kinds: string[] } | null>({ op: "journal", id }))?.kinds.filter((k) => k === "cancel").length ?? 0;
    await eventually(
      "both children asked to cancel",
      async () => (await cancels(children[0]!)) === 1 && (await cancels(children[1]!)) === 1,
    );
    await a.kill();
    await eventually("B and C to hold every shard", async () => (await holders(name)).every((o) => o === "B" || o === "C"), 15_000);
    // The new owner has reconciled the parent's shard once the parent answers from there.
    await c.send({ op: "result", id: parent });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect([await cancels(children[0]!), await cancels(children[1]!)]).to.deep.equal([1, 1]);
  });

  it("asks a child a reset's new run kept to cancel once, though the parent's process takes the child's shard over after", async () => {
    const [a, b, name] = await cluster.start();
    const owners = await holders(name);
    const parent = Array.from({ length: 200 }, (_, i) => `keeper-${i}`).find(
      (id) => owners[shardOf(id, SHARDS)] === "A" && owners[shardOf(`${id}-child`, SHARDS)] === "B",
    ) as string;
    const child = `${parent}-child`;
    await a.send({ op: "startType", type: "cluster-keeper", id: parent, input: child });
    const journal = (id: string): Promise<{ runId: number; kinds: string[] } | null> => a.send({ op: "journal", id });
    await eventually("the parent's step after its child's start", async () => (await journal(parent))?.kinds.includes("step") === true);
    // Through the process that does not hold the parent, as a client of the cluster may.
    await b.send({ op: "reset", id: parent, step: "after" });
    expect((await journal(parent))?.runId, "the reset made a new run, which keeps the child").to.equal(2);
    await b.send({ op: "signal", id: parent, by: "the test" });
    await a.send({ op: "result", id: parent });
    const cancels = async (): Promise<number> => (await journal(child))?.kinds.filter((k) => k === "cancel").length ?? 0;
    await eventually("the child asked to cancel", async () => (await cancels()) === 1);
    await b.kill();
    await eventually("A to hold every shard", async () => (await holders(name)).every((o) => o === "A"), 15_000);
    // A has reconciled the child's shard once the child answers from there.
    await a.send({ op: "status", id: child });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await cancels()).to.equal(1);
  });
});
