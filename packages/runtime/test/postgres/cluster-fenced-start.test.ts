import { expect } from "chai";
import { shardOf } from "../../src/core/ids.js";
import { type ClusterWorker, holders, useClusterPair } from "./support/cluster.js";
import { sql, useSchemas } from "./support/database.js";
import { eventually } from "../support/wait.js";

const SHARDS = 8;
const LEASE_MS = 1_000;
const INPUT = { n: 0, wait: false, stepMs: 1 };

describe("A start a cluster process forwards on behalf of a shard it holds, as schedules and windows do (real processes)", function () {
  this.timeout(60_000);
  const schema = useSchemas();
  const cluster = useClusterPair(schema, { shards: SHARDS, leaseMs: LEASE_MS });

  /** A shard `owner` holds, and a run ID in a shard the other process holds. */
  async function layout(name: string, owner: string, other: string): Promise<{ fence: number; id: string }> {
    const owners = await holders(name);
    const id = Array.from({ length: 100 }, (_, i) => `fenced-${i}`).find((x) => owners[shardOf(x, SHARDS)] === other)!;
    return { fence: owners.indexOf(owner), id };
  }

  const requests = async (name: string): Promise<number> =>
    (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}".requests`))[0]!.n;

  const failure = (asked: Promise<unknown>): Promise<Error & { reason?: string }> =>
    asked.then(
      () => expect.fail("the start succeeded"),
      (e: Error & { reason?: string }) => e,
    );

  it("is performed by the run's owner while the asking process holds the shard", async () => {
    const [a, b, name] = await cluster.start();
    const { fence, id } = await layout(name, "A", "B");

    await a.send({ op: "fencedStart", id, input: INPUT, fence });
    expect(await b.send({ op: "result", id })).to.equal("10");
  });

  it("fails at once with RejectedError (reason lease-lost), asking nothing, when the asking process does not hold the shard", async () => {
    const [a, b, name] = await cluster.start();
    const { id } = await layout(name, "A", "B");
    const notHeld = (await holders(name)).indexOf("B");

    const e = await failure(a.send({ op: "fencedStart", id, input: INPUT, fence: notHeld }));
    expect(e.name).to.equal("RejectedError");
    expect(e.reason).to.equal("lease-lost");
    expect(e.message).to.contain(`shard ${notHeld}`).and.contain("not sent");
    expect(await requests(name), "requests stored").to.equal(0);
    expect(await b.send({ op: "status", id })).to.equal(null);
  });

  it("creates no run, and is answered with RejectedError (reason lease-lost), when the run's owner takes it up after the asking process lost the shard", async () => {
    const [a, b, name] = await cluster.start();
    const { fence, id } = await layout(name, "A", "B");

    // The run's owner is stopped before the start is asked, so it can take the request up only later.
    b.process.kill("SIGSTOP");
    const asked = failure(a.send({ op: "fencedStart", id, input: INPUT, fence }));
    await eventually("the start to be asked", async () => (await requests(name)) === 1);
    a.process.kill("SIGSTOP");
    await eventually("the asking process's lease on the shard to run out", async () => (await holders(name))[fence] === undefined, 10_000);
    b.process.kill("SIGCONT");
    await eventually("the start to be answered", async () => (await requests(name)) === 0, 15_000);
    a.process.kill("SIGCONT");

    const e = await asked;
    expect(e.name).to.equal("RejectedError");
    expect(e.reason).to.equal("lease-lost");
    expect(e.message).to.contain(`shard ${fence}`).and.contain("not performed");
    expect(await statusOf(b, id), "the run").to.equal(null);
  });

  it("is answered as performed when an earlier owner of the run's shard performed it and died before answering, though the asking process lost the shard since", async () => {
    const [a, b, name] = await cluster.start({ FUSEE_TEST_CRASH_AFTER_PERFORM: "start" });
    const { fence, id } = await layout(name, "A", "B");

    const asked = a.send({ op: "fencedStart", id, input: INPUT, fence });
    await b.exited;
    a.process.kill("SIGSTOP");
    await eventually("the asking process's lease on the shard to run out", async () => (await holders(name))[fence] === undefined, 10_000);
    const c = await cluster.spawn("C", name);
    await eventually("the start to be answered", async () => (await requests(name)) === 0, 15_000);
    a.process.kill("SIGCONT");

    expect(await asked, "the start's answer").to.equal(null);
    expect(await c.send({ op: "result", id })).to.equal("10");
  });
});

/** The status of run `id` as `via` reads it, asked again while the shard it asks moves. */
async function statusOf(via: ClusterWorker, id: string): Promise<unknown> {
  let status: unknown;
  await eventually(`the status of ${id} to be read`, () =>
    via.send({ op: "status", id }).then(
      (s) => ((status = s), true),
      () => false,
    ),
  );
  return status;
}
