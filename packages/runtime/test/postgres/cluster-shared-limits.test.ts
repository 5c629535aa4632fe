import { expect } from "chai";
import { shardOf } from "../../src/core/ids.js";
import { holders, useClusterPair } from "./support/cluster.js";
import { useSchemas } from "./support/database.js";
import { eventually, sleep } from "../support/wait.js";

const SHARDS = 8;
const LEASE_MS = 1_000;

interface Visit {
  readonly id: string;
  readonly owner: string;
  readonly enter: number;
  readonly leave: number | undefined;
}

describe("Limits shared by the processes of a cluster (real processes)", function () {
  this.timeout(60_000);
  const schema = useSchemas();
  const cluster = useClusterPair(schema, { shards: SHARDS, leaseMs: LEASE_MS });

  /** IDs whose runs the given process owns. */
  async function idsOf(schemaName: string, owner: string, prefix: string, count: number): Promise<string[]> {
    const owners = await holders(schemaName);
    return Array.from({ length: 200 }, (_, i) => `${prefix}-${i}`)
      .filter((id) => owners[shardOf(id, SHARDS)] === owner)
      .slice(0, count);
  }

  function visits(): Visit[] {
    const byId = new Map<string, Visit>();
    for (const l of cluster.steps()) {
      const [what, id, owner, at] = l.split(" ") as [string, string, string, string];
      if (what === "enter") byId.set(id, { id, owner, enter: Number(at), leave: undefined });
      else if (what === "leave") byId.set(id, { ...(byId.get(id) as Visit), leave: Number(at) });
    }
    return [...byId.values()].sort((x, y) => x.enter - y.enter);
  }

  it("lets one step at a time hold a permit of a limit of one, whichever process runs it", async () => {
    const [a, b, name] = await cluster.start();
    const ofA = await idsOf(name, "A", "one", 3);
    const ofB = await idsOf(name, "B", "one", 3);
    const starts = [
      ...ofA.map((id) => a.send({ op: "startType", type: "cluster-limited", id, input: { limit: "one", ms: 80 } })),
      ...ofB.map((id) => b.send({ op: "startType", type: "cluster-limited", id, input: { limit: "one", ms: 80 } })),
    ];
    await Promise.all(starts);
    await Promise.all([...ofA.map((id) => a.send({ op: "result", id })), ...ofB.map((id) => b.send({ op: "result", id }))]);
    const seen = visits();
    expect(seen).to.have.length(6);
    expect(new Set(seen.map((v) => v.owner))).to.deep.equal(new Set(["A", "B"]));
    for (let i = 1; i < seen.length; i++) {
      const before = seen[i - 1] as Visit;
      const now = seen[i] as Visit;
      expect(now.enter, `${now.id} on ${now.owner} entered before ${before.id} on ${before.owner} left`).to.be.at.least(
        before.leave as number,
      );
    }
  });

  it("spaces the attempts of a rate limit across processes", async () => {
    const [a, b, name] = await cluster.start();
    const ofA = await idsOf(name, "A", "paced", 3);
    const ofB = await idsOf(name, "B", "paced", 3);
    await Promise.all([
      ...ofA.map((id) => a.send({ op: "startType", type: "cluster-limited", id, input: { limit: "paced", ms: 1 } })),
      ...ofB.map((id) => b.send({ op: "startType", type: "cluster-limited", id, input: { limit: "paced", ms: 1 } })),
    ]);
    await Promise.all([...ofA.map((id) => a.send({ op: "result", id })), ...ofB.map((id) => b.send({ op: "result", id }))]);
    const enters = visits().map((v) => v.enter);
    expect(enters).to.have.length(6);
    // 5 per second: 200 ms apart on the database clock. A permit reaches its step a little late now
    // and then, so each gap is held to half that and the whole span to the five gaps less some slack.
    for (let i = 1; i < enters.length; i++) expect((enters[i] as number) - (enters[i - 1] as number)).to.be.at.least(100);
    expect((enters[5] as number) - (enters[0] as number)).to.be.at.least(900);
  });

  it("frees the permits of a process that dies holding them within the lease time", async () => {
    const [a, b, name] = await cluster.start();
    const [held] = await idsOf(name, "B", "held", 1);
    const [waiting] = await idsOf(name, "A", "waiting", 1);
    await b.send({ op: "startType", type: "cluster-limited", id: held, input: { limit: "one", ms: 30_000 } });
    await eventually("B to hold the permit", async () => visits().some((v) => v.id === held));
    await a.send({ op: "startType", type: "cluster-limited", id: waiting, input: { limit: "one", ms: 1 } });
    await sleep(300);
    expect(
      visits().some((v) => v.id === waiting),
      "A waits while B holds the permit",
    ).to.equal(false);
    await b.kill();
    const killedAt = Date.now();
    await a.send({ op: "result", id: waiting });
    const entered = (visits().find((v) => v.id === waiting) as Visit).enter;
    expect(entered - killedAt).to.be.below(LEASE_MS + 1_500);
  });
});
