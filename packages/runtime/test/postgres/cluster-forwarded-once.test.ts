import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shardOf } from "../../src/core/ids.js";
import { ClusterWorker, holders } from "./support/cluster.js";
import { PG_URL, useSchemas } from "./support/database.js";
import { uniqueOwner } from "./support/faults.js";
import { eventually, sleep } from "../support/wait.js";

const SHARDS = 8;
const LEASE_MS = 1_500;
const SIGNALS = 64;
const ROUNDS = 4;

describe("signals forwarded to a cluster owner killed mid-call (three real processes)", function () {
  this.timeout(120_000);
  const schema = useSchemas();
  let workers: ClusterWorker[] = [];
  let stepLog = "";
  beforeEach(() => {
    stepLog = join(tmpdir(), `fusee-forwarded-${randomBytes(4).toString("hex")}.log`);
  });
  afterEach(async () => {
    for (const w of workers) await w.kill();
    workers = [];
    if (existsSync(stepLog)) rmSync(stepLog);
  });

  const spawnWorker = async (name: string, prefix: string): Promise<ClusterWorker> => {
    const w = new ClusterWorker(uniqueOwner(prefix), { url: PG_URL, schema: name, leaseMs: LEASE_MS, stepLog });
    workers.push(w);
    await w.ready;
    return w;
  };

  it("applies each acknowledged signal exactly once, whenever within ±50 ms of the calls its owner dies", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const name = schema();
      const three = [await spawnWorker(name, "a"), await spawnWorker(name, "b"), await spawnWorker(name, "c")];
      await eventually(
        "every shard held",
        async () => (await holders(name)).every((h) => h !== undefined) && new Set(await holders(name)).size === 3,
        20_000,
      );
      const held = await holders(name);
      // A run on a shard of the process to kill, signalled by a process that holds none of its shards.
      const [victim, caller, survivor] = three as [ClusterWorker, ClusterWorker, ClusterWorker];
      const id = Array.from({ length: 200 }, (_, i) => `tally-${round}-${i}`).find(
        (c) => held[shardOf(c, SHARDS)] === victim.owner,
      ) as string;
      await victim.send({ op: "startType", type: "cluster-tally", id, input: null });
      const tags = Array.from({ length: SIGNALS }, (_, i) => `r${round}-s${i}`);
      // The owner dies from 50 ms before the calls to 50 ms after them, a different moment each round.
      const offset = Math.round(-50 + (100 * round) / (ROUNDS - 1));
      let sent: Promise<string[]>;
      if (offset < 0) {
        const killed = victim.kill();
        await sleep(-offset);
        sent = caller.send<string[]>({ op: "add", id, tags });
        await killed;
      } else {
        sent = caller.send<string[]>({ op: "add", id, tags });
        await sleep(offset);
        await victim.kill();
      }
      const acked = await sent;
      const recorded = await eventuallyValue(() => survivor.send<string[] | null>({ op: "tags", id }), 30_000);
      const counts = new Map<string, number>();
      for (const tag of recorded) counts.set(tag, (counts.get(tag) ?? 0) + 1);
      const twice = [...counts].filter(([, n]) => n > 1).map(([tag]) => tag);
      expect(twice, `round ${round}: signals in the journal more than once`).to.deep.equal([]);
      const lost = acked.filter((tag) => !counts.has(tag));
      expect(lost, `round ${round}: acknowledged signals missing from the journal`).to.deep.equal([]);
      for (const w of three) await w.kill();
      workers = [];
    }
  });
});

/** Asks until the answer is there (the run's shard may still be moving), failing after `ms`. */
async function eventuallyValue<T>(ask: () => Promise<T | null>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await ask().catch(() => null);
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error("no answer in time");
    await sleep(50);
  }
}
