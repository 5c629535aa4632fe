import { expect } from "chai";
import pg from "pg";
import { StorageError } from "../../src/core/errors.js";
import { openPostgresLog, type PostgresLog } from "../../src/storage/postgres/pg-log.js";
import { PG_URL, sql, storedEntries, useSchemas } from "./support/database.js";
import { appendCutOnLeaseRow, uniqueOwner } from "./support/faults.js";
import { eventually, sleep } from "../support/wait.js";

const entry = (body: string) => ({ stream: "s", body: new TextEncoder().encode(body) });

describe("PostgreSQL write failures", () => {
  const schema = useSchemas();
  let log: PostgresLog | undefined;
  let blocker: pg.Client | undefined;
  afterEach(async () => {
    await blocker?.end().catch(() => undefined);
    await log?.close();
    log = blocker = undefined;
  });

  it("stops the shard when an insert's connection dies mid-statement, acknowledging nothing after it", async () => {
    const name = schema();
    log = await openPostgresLog({ url: PG_URL, schema: name, shards: 1, owner: "victim", background: false });
    const lost: string[] = [];
    log.onLost((shard, reason) => lost.push(`${shard} ${reason}`));
    await log.append(0, entry("1"));

    // Hold the lease row so the next insert waits on it, then kill that insert's connection.
    blocker = new pg.Client({ connectionString: PG_URL });
    await blocker.connect();
    await blocker.query("BEGIN");
    await blocker.query(`SELECT 1 FROM "${name}".leases WHERE shard = 0 FOR UPDATE`);
    let heldWhenTold: number | undefined = -1;
    const pending = log.append(0, entry("2")).catch((e: unknown) => {
      heldWhenTold = log?.epochOf(0);
      return e;
    });
    let pid: number | undefined;
    await eventually("the insert to wait for the lease row", async () => {
      const [row] = await sql<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = 'fusee victim' AND wait_event_type = 'Lock'`,
      );
      pid = row?.pid;
      return pid !== undefined;
    });
    await sql("SELECT pg_terminate_backend($1)", [pid]);

    const err = await pending;
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain("shard 0 stopped")
      .and.contain(`"${name}".batches`)
      .and.contain('owner "victim", epoch 1');
    expect(lost).to.deep.equal(["0 failed"]);
    expect(heldWhenTold, "the shard was no longer this process's when the failed append was told").to.equal(undefined);
    await blocker.query("ROLLBACK");

    expect(await log.append(0, entry("3")).catch((e: unknown) => e)).to.equal(err);
    expect((await storedEntries(name)).map((e) => e.body)).to.deep.equal(["1"]);
    await eventually("the stopped shard's lease to be given back", async () => {
      const [lease] = await sql<{ owner: string | null }>(`SELECT owner FROM "${name}".leases WHERE shard = 0`);
      return lease?.owner === null;
    });
  });

  it("takes a shard whose insert failed again after a back-off, at a new epoch, from what the database holds", async () => {
    const name = schema();
    const owner = uniqueOwner("retake");
    log = await openPostgresLog({ url: PG_URL, schema: name, shards: 1, owner, leaseMs: 900, background: false });
    await log.append(0, entry("1"));
    const retaken = log;
    expect(await appendCutOnLeaseRow(name, owner, () => retaken.append(0, entry("2")))).to.be.instanceOf(StorageError);
    expect(log.ownedShards()).to.deep.equal([]);

    await log.rebalance();
    expect(log.ownedShards(), "not taken again before the back-off").to.deep.equal([]);
    await sleep(400);
    await log.rebalance();
    expect(log.ownedShards()).to.deep.equal([0]);
    expect(log.epochOf(0)).to.equal(2);
    await log.append(0, entry("3"));
    expect((await log.read(0, "s")).map((e) => Buffer.from(e.body).toString())).to.deep.equal(["1", "3"]);
  });
});
