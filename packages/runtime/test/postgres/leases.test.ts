import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import type { LogEntry } from "../../src/storage/log.js";
import { openPostgresLog, type PostgresLog, type PostgresLogOptions } from "../../src/storage/postgres/pg-log.js";
import { PG_URL, sql, storedEntries, useSchemas } from "./support/database.js";
import pg from "pg";
import { uniqueOwner } from "./support/faults.js";
import { eventually, sleep } from "../support/wait.js";

const entry = (stream: string, body: string): LogEntry => ({ stream, body: new TextEncoder().encode(body) });

describe("PostgreSQL shard leases", () => {
  const schema = useSchemas();
  let logs: PostgresLog[] = [];
  const open = async (options: Omit<PostgresLogOptions, "url">): Promise<PostgresLog> => {
    const log = await openPostgresLog({ url: PG_URL, background: false, ...options });
    logs.push(log);
    return log;
  };
  afterEach(async () => {
    await Promise.allSettled(logs.map((l) => l.close()));
    logs = [];
  });
  const bodies = async (name: string, shard: number): Promise<string[]> => (await storedEntries(name, shard)).map((e) => e.body);

  it("gives a single process every shard, at epoch 1", async () => {
    const log = await open({ schema: schema(), shards: 3, owner: "solo" });
    expect(log.ownedShards()).to.deep.equal([0, 1, 2]);
    expect((await log.leases()).map((r) => [r.shard, r.owner, r.epoch, r.live])).to.deep.equal([
      [0, "solo", 1, true],
      [1, "solo", 1, true],
      [2, "solo", 1, true],
    ]);
  });

  it("fences out a process whose lease expired, on its own clock first: its appends reject and nothing it sends is stored", async () => {
    const name = schema();
    const a = await open({ schema: name, shards: 2, owner: "a", leaseMs: 300 });
    const lost: [number, string][] = [];
    a.onLost((shard, reason) => lost.push([shard, reason]));
    await a.append(0, entry("s", "a-before"));
    await sleep(400);

    const b = await open({ schema: name, owner: "b" });
    expect(b.ownedShards()).to.deep.equal([0, 1]);
    expect(b.epochOf(0)).to.equal(2);

    const err = await a.append(0, entry("s", "a-after")).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    // No renewal ran, so the process's own clock says the lease ran out before any statement does.
    expect((err as Error).message).to.contain('shard 0: owner "a" let its lease at epoch 1 run out');
    expect(lost, "both shards stopped at their deadline, with no call needed").to.deep.equal([
      [0, "expired"],
      [1, "expired"],
    ]);
    const again = await a.append(0, entry("s", "a-later")).catch((e: unknown) => e);
    expect(again).to.equal(err);
    const told = await new Promise<string>((resolve) =>
      a.appendThen(0, "s", new TextEncoder().encode("a-waiter"), { appended: () => resolve("durable"), failed: (e) => resolve(e.message) }),
    );
    expect(told, "a waiter is fenced like an append").to.equal((err as Error).message);

    await b.append(0, entry("s", "b"));
    expect(await bodies(name, 0)).to.deep.equal(["a-before", "b"]);
    expect((await b.read(0, "s")).map((e) => Buffer.from(e.body).toString())).to.deep.equal(["a-before", "b"]);

    await b.append(1, entry("t", "b-kept"));
    const dropErr = await a.drop(1, ["t"]).catch((e: unknown) => e);
    expect(dropErr, "a drop is fenced like an append").to.be.instanceOf(StorageError);
    expect(await bodies(name, 1)).to.deep.equal(["b-kept"]);
    expect(lost).to.deep.equal([
      [0, "expired"],
      [1, "expired"],
    ]);
    expect(a.ownedShards()).to.deep.equal([]);
    expect(await a.append(1, entry("s", "a-late")).catch((e: unknown) => e)).to.be.instanceOf(StorageError);
    expect(await bodies(name, 1)).to.deep.equal(["b-kept"]);
  });

  it("takes a lost shard anew only through a new lease, announced with its epoch", async () => {
    const name = schema();
    const a = await open({ schema: name, shards: 1, owner: "a", leaseMs: 200 });
    const events: string[] = [];
    a.onAcquired((shard, epoch) => events.push(`took ${shard} at ${epoch}`));
    a.onLost((shard, reason) => events.push(`lost ${shard} (${reason})`));
    await a.append(0, entry("s", "1"));
    await sleep(300);
    const b = await open({ schema: name, owner: "b", leaseMs: 60_000 });
    await b.append(0, entry("s", "2"));
    expect(await a.append(0, entry("s", "rejected")).catch((e: unknown) => e)).to.be.instanceOf(StorageError);
    await b.close();

    await a.rebalance();
    expect(events).to.deep.equal(["lost 0 (expired)", "took 0 at 3"]);
    expect(a.streams(0)).to.deep.equal(["s"]);
    await a.append(0, entry("s", "3"));
    expect(await bodies(name, 0)).to.deep.equal(["1", "2", "3"]);
  });

  it("never takes a lost shard again when it claims every shard", async () => {
    const name = schema();
    const a = await open({ schema: name, shards: 1, owner: "a", leaseMs: 200, claim: "all" });
    await sleep(300);
    const b = await open({ schema: name, owner: "b" });
    await b.close();
    expect(await a.append(0, entry("s", "x")).catch((e: unknown) => e)).to.be.instanceOf(StorageError);
    await a.rebalance();
    expect(a.ownedShards()).to.deep.equal([]);
    expect(await a.append(0, entry("s", "y")).catch((e: unknown) => e)).to.be.instanceOf(StorageError);
    expect(await bodies(name, 0)).to.deep.equal([]);
  });

  it("stores every append the old owner had acknowledged and none it had rejected, under a takeover race", async () => {
    const name = schema();
    const a = await open({ schema: name, shards: 1, owner: "a", leaseMs: 60_000 });
    const acked = new Set<string>();
    const rejected = new Set<string>();
    let stop = false;
    const writers = Array.from({ length: 16 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const body = `a-${w}-${i}`;
        try {
          await a.append(0, entry(`w${w}`, body));
          acked.add(body);
        } catch {
          rejected.add(body);
          if (rejected.size > 200) return;
        }
      }
    });
    await sleep(100);
    // The process stalls: its lease and its heartbeat run out while its appends are still in flight.
    await sql(
      `WITH o AS (UPDATE "${name}".owners SET expires_at = clock_timestamp() WHERE owner = 'a')
       UPDATE "${name}".leases SET expires_at = clock_timestamp() + interval '30 milliseconds' WHERE shard = 0`,
    );
    const b = await open({ schema: name, owner: "b", leaseMs: 60_000 });
    while (b.ownedShards().length === 0) await b.rebalance();
    await b.append(0, entry("b", "b-first"));
    await sleep(50);
    stop = true;
    await Promise.all(writers);

    const stored = await bodies(name, 0);
    expect(acked.size).to.be.greaterThan(0);
    expect(rejected.size).to.be.greaterThan(0);
    expect(stored.filter((s) => rejected.has(s))).to.deep.equal([]);
    expect([...acked].filter((s) => !stored.includes(s))).to.deep.equal([]);
    expect(stored.at(-1)).to.equal("b-first");
    expect(stored.length).to.equal(acked.size + 1);
  });

  it("keeps a lease past its length while the process renews it in the background", async () => {
    const name = schema();
    const a = await open({ schema: name, shards: 1, owner: "a", leaseMs: 600, background: true, claim: "all" });
    await sleep(1_500);
    await a.append(0, entry("s", "still mine"));
    const [row] = await a.leases();
    expect([row?.owner, row?.epoch, row?.live]).to.deep.equal(["a", 1, true]);
  });

  it("warns, naming the delay, when the event loop blocks its lease renewal for a third of the lease", async () => {
    const name = schema();
    const a = await open({ schema: name, shards: 1, owner: "blocked", leaseMs: 900, background: true, claim: "all" });
    const warnings: Error[] = [];
    const listen = (w: Error): void => void warnings.push(w);
    process.on("warning", listen);
    try {
      // Blocks the loop across the next renewal (due within 300 ms) for about 450 ms.
      const until = Date.now() + 750;
      while (Date.now() < until);
      await sleep(100);
    } finally {
      process.off("warning", listen);
    }
    const late = warnings.find((w) => (w as NodeJS.ErrnoException).code === "FUSEE_LEASE_RENEWAL_LATE");
    expect(late?.name).to.equal("FuseeLeaseWarning");
    expect(late?.message)
      .to.match(/owner "blocked" renewed its shard leases \d+ ms late/)
      .and.contain("leaseMs 900");
    await a.append(0, entry("s", "kept"));
  });

  it("warns that it lost its leases and stops their shards when a renewal hangs past their expiry", async () => {
    const name = schema();
    const owner = uniqueOwner("hung");
    const a = await open({ schema: name, shards: 2, owner, leaseMs: 600, background: true });
    const lost: string[] = [];
    a.onLost((shard, reason) => lost.push(`${shard} ${reason}`));
    const warnings: Error[] = [];
    const listen = (w: Error): void => void warnings.push(w);
    process.on("warning", listen);
    // The renewal's heartbeat waits for this lock, so the renewal in flight never finishes while it is held.
    const blocker = new pg.Client({ connectionString: PG_URL });
    await blocker.connect();
    try {
      await blocker.query("BEGIN");
      await blocker.query(`SELECT 1 FROM "${name}".owners WHERE owner = $1 FOR UPDATE`, [owner]);
      await eventually("both shards to stop", () => a.ownedShards().length === 0, 3_000);
      expect(lost).to.deep.equal(["0 expired", "1 expired"]);
      const lostWarnings = (): Error[] => warnings.filter((w) => (w as NodeJS.ErrnoException).code === "FUSEE_LEASE_LOST");
      // Process warnings are emitted on a later tick.
      await eventually("the warnings", () => lostWarnings().length === 2, 1_000);
      const gone = lostWarnings();
      expect(gone.map((w) => w.name)).to.deep.equal(["FuseeLeaseWarning", "FuseeLeaseWarning"]);
      expect(gone[0]?.message).to.contain(`owner "${owner}" lost its lease on shard 0`).and.contain("run out");
      await blocker.query("ROLLBACK");
    } finally {
      process.off("warning", listen);
      await blocker.end();
    }
    await eventually("the shards to be taken again once renewals get through", () => a.ownedShards().length === 2, 5_000);
    await a.append(0, entry("s", "after"));
  });

  it("spreads shards over the live owners and takes them back when an owner leaves", async () => {
    const name = schema();
    const a = await open({ schema: name, shards: 4, owner: "a", leaseMs: 5_000 });
    const events: string[] = [];
    a.onLost((shard, reason) => events.push(`a lost ${shard} (${reason})`));
    a.onAcquired((shard, epoch) => events.push(`a took ${shard} at ${epoch}`));
    const b = await open({ schema: name, owner: "b", leaseMs: 5_000 });
    expect(b.ownedShards(), "every shard is held by a live owner").to.deep.equal([]);

    await a.rebalance();
    expect(a.ownedShards()).to.deep.equal([0, 1]);
    await b.rebalance();
    expect(b.ownedShards()).to.deep.equal([2, 3]);
    expect(events).to.deep.equal(["a lost 2 (released)", "a lost 3 (released)"]);
    const err = await a.append(2, entry("s", "x")).catch((e: unknown) => e);
    expect((err as Error).message).to.contain('shard 2 was released by owner "a" (epoch 1)');
    await b.append(2, entry("from-b", "1"));

    await b.close();
    await a.rebalance();
    expect(a.ownedShards()).to.deep.equal([0, 1, 2, 3]);
    expect(events.slice(2)).to.deep.equal(["a took 2 at 3", "a took 3 at 3"]);
    expect(a.streams(2)).to.deep.equal(["from-b"]);
    await a.append(2, entry("from-a", "2"));
    expect(await bodies(name, 2)).to.deep.equal(["1", "2"]);
  });

  it("lets a process that claims every shard refuse to share them, naming the holder", async () => {
    const name = schema();
    await open({ schema: name, shards: 2, owner: "first", claim: "all", background: true, leaseMs: 2_000 });
    const err = await open({ schema: name, owner: "second", claim: "all", claimTimeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain('owner "second" could not take every shard')
      .and.contain('shows owner "first" at epoch 1')
      .and.contain("another process is using it");
  });
});
