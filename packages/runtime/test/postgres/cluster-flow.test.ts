import { expect } from "chai";
import { SYSTEM_STREAM_PREFIX, shardOf } from "../../src/core/ids.js";
import type { ScheduleDescription } from "../../src/journal/schedule-state.js";
import { type ClusterWorker, holders, useClusterPair } from "./support/cluster.js";
import { useSchemas } from "./support/database.js";
import { eventually } from "../support/wait.js";

const SHARDS = 8;
const LEASE_MS = 1_000;

describe("Schedules, debounce and batches on a cluster (real processes)", function () {
  this.timeout(60_000);
  const schema = useSchemas();
  const cluster = useClusterPair(schema, { shards: SHARDS, leaseMs: LEASE_MS });

  /** A name whose engine streams of `family` fall in a shard `owner` holds. */
  async function nameOn(schemaName: string, owner: string, family: string, prefix: string): Promise<string> {
    const owners = await holders(schemaName);
    const found = Array.from({ length: 200 }, (_, i) => `${prefix}-${i}`).find(
      (n) => owners[shardOf(`${SYSTEM_STREAM_PREFIX}${family}/${n}`, SHARDS)] === owner,
    );
    if (found === undefined) throw new Error(`no ${family} name falls in a shard of ${owner}`);
    return found;
  }

  it("runs a schedule kept in another process's shard, controls it from either process and carries it on after that process dies", async () => {
    const [a, b, name] = await cluster.start();
    const schedule = await nameOn(name, "B", "schedule", "every");
    const spec = { workflow: "cluster-job", every: "200ms", input: { n: 0, wait: false, stepMs: 1 } };
    const describe = (via: ClusterWorker): Promise<ScheduleDescription> =>
      via.send({ op: "schedule", name: schedule, spec, then: "describe" });

    await a.send({ op: "schedule", name: schedule, spec });
    await eventually("two runs started by the schedule", async () => (await describe(a)).started >= 2, 10_000);
    await a.send({ op: "schedule", name: schedule, spec, then: "pause" });
    expect((await describe(b)).paused, "paused through A, seen through B").to.equal(true);
    const startedWhilePaused = (await describe(a)).started;

    await b.kill();
    await eventually("A to hold every shard", async () => (await holders(name)).every((o) => o === "A"), 10_000);
    const taken = await describe(a);
    expect(taken.paused, "the pause survived the takeover").to.equal(true);
    expect(taken.started).to.equal(startedWhilePaused);
    await a.send({ op: "schedule", name: schedule, spec, then: "resume" });
    await eventually("the schedule to start runs on A", async () => (await describe(a)).started >= startedWhilePaused + 2, 10_000);
    const latest = (await describe(a)).recentRuns[0] as string;
    expect(await a.send<string>({ op: "result", id: latest })).to.equal("10");
  });

  it("debounces and batches events whose keys fall in another process's shard", async () => {
    const [a, , name] = await cluster.start();
    const key = await nameOn(name, "B", "debounce", "doc");
    const ids = [];
    for (let rev = 1; rev <= 3; rev++)
      ids.push(await a.send<string>({ op: "debounce", key, input: { rev }, delay: "150ms", eventId: `e-${rev}` }));
    expect(new Set(ids).size, "one window for the three starts").to.equal(1);
    expect(await a.send({ op: "result", id: ids[0] })).to.deep.equal({ rev: 3 });
    // A retried event ID answers with its window's run.
    expect(await a.send<string>({ op: "debounce", key, input: { rev: 2 }, delay: "150ms", eventId: "e-2" })).to.equal(ids[0]);

    const tenant = await nameOn(name, "B", "batch", "tenant");
    const batch = await Promise.all(
      [1, 2, 3].map((sku) => a.send<string>({ op: "batch", key: tenant, event: { sku }, size: 3, timeout: "10s" })),
    );
    expect(new Set(batch).size).to.equal(1);
    const events = await a.send<{ sku: number }[]>({ op: "result", id: batch[0] });
    expect(events.map((e) => e.sku).sort()).to.deep.equal([1, 2, 3]);
  });
});
