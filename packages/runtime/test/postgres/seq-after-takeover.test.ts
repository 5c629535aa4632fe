import { expect } from "chai";
import pg from "pg";
import { StorageError } from "../../src/core/errors.js";
import { readAt } from "../../src/storage/postgres/batch-rows.js";
import { openPostgresLog, type PostgresLog, type PostgresLogOptions } from "../../src/storage/postgres/pg-log.js";
import { tablesOf } from "../../src/storage/postgres/schema.js";
import { PG_URL, sql, storedEntries, useSchemas } from "./support/database.js";
import { appendCutOnLeaseRow, uniqueOwner } from "./support/faults.js";
import { eventually, sleep } from "../support/wait.js";

const LEASE_MS = 1_000;
const body = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (entries: readonly { body: Uint8Array }[]): string[] => entries.map((e) => Buffer.from(e.body).toString());

describe("PostgreSQL entry numbering across a takeover", () => {
  const schema = useSchemas();
  let logs: PostgresLog[] = [];
  const open = async (options: Partial<PostgresLogOptions>): Promise<PostgresLog> => {
    const log = await openPostgresLog({ url: PG_URL, shards: 1, leaseMs: LEASE_MS, background: false, ...options });
    logs.push(log);
    return log;
  };
  afterEach(async () => {
    await Promise.allSettled(logs.map((l) => l.close()));
    logs = [];
  });

  it("numbers a new holder's entries past those of rows a drop deleted before the takeover", async () => {
    const name = schema();
    const first = await open({ schema: name, owner: "first" });
    await first.append(0, { stream: "kept", body: body("1") });
    await first.appendAll(0, [
      { stream: "v", body: body("2") },
      { stream: "v", body: body("3") },
    ]);
    const used = (await storedEntries(name)).map((e) => e.seq);
    const at = await sql<{ row: string; position: number }>(
      `SELECT b.seq AS row, x.position FROM "${name}".batches AS b, unnest(b.streams) WITH ORDINALITY AS x(stream, position)
        WHERE x.stream = 'v' ORDER BY b.seq, x.position`,
    );
    await first.drop(0, ["v"]);

    // The first holder's lease runs out unrenewed, and the next process takes the shard over.
    await sleep(LEASE_MS + 200);
    const next = await open({ schema: name, owner: "next", claim: "all" });
    expect(next.epochOf(0)).to.equal(2);
    await next.append(0, { stream: "w", body: body("4") });

    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    try {
      const rows = at.map((r) => Number(r.row));
      const positions = at.map((r) => r.position);
      expect(await readAt(pool, tablesOf(name), 0, rows, positions), "positions of the dropped stream find nothing").to.deep.equal([]);
    } finally {
      await pool.end();
    }
    const stored = await storedEntries(name);
    expect(stored.map((e) => e.body)).to.deep.equal(["1", "4"]);
    expect(stored[1]!.seq, "the new entry's seq is past every seq the first holder used").to.be.above(Math.max(...used));
    expect(text(await next.read(0, "w"))).to.deep.equal(["4"]);
    expect(text(await next.read(0, "v"))).to.deep.equal([]);
  });

  it("numbers entries past a batch a drop cancelled, when the shard is taken after its holder's sessions were dropped", async () => {
    const name = schema();
    const owner = uniqueOwner("dropped");
    const first = await open({ schema: name, owner });
    await first.append(0, { stream: "kept", body: body("1") });
    await Promise.all([
      first.append(0, { stream: "x", body: body("cancelled") }),
      first.append(0, { stream: "x", body: body("cancelled too") }),
      first.drop(0, ["x"]),
    ]);

    // The next insert waits on the lease row while every session of the holder is terminated.
    const cut = await appendCutOnLeaseRow(name, owner, () => first.append(0, { stream: "kept", body: body("lost") }));
    expect(cut).to.be.instanceOf(StorageError);
    await eventually("the holder to give the lease back", async () => {
      const [lease] = await sql<{ owner: string | null }>(`SELECT owner FROM "${name}".leases WHERE shard = 0`);
      return lease?.owner === null;
    });

    const next = await open({ schema: name, owner: "next", claim: "all" });
    expect(next.ownedShards()).to.deep.equal([0]);
    await next.append(0, { stream: "kept", body: body("2") });
    expect((await storedEntries(name)).map((e) => [e.seq, e.body])).to.deep.equal([
      [1, "1"],
      [4, "2"],
    ]);
    const scanned: string[] = [];
    for await (const e of next.scan(0)) scanned.push(Buffer.from(e.body).toString());
    expect(scanned).to.deep.equal(["1", "2"]);
  });
});
