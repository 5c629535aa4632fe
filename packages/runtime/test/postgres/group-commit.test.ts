import { expect } from "chai";
import { openPostgresLog, type PostgresLog } from "../../src/storage/postgres/pg-log.js";
import { PG_URL, sql, storedEntries, useSchemas } from "./support/database.js";

const body = (s: string): Uint8Array => new TextEncoder().encode(s);

describe("PostgreSQL group commit", () => {
  const schema = useSchemas();
  let log: PostgresLog;
  afterEach(() => log.close());

  it("stores concurrent appends to a shard with a few inserts, in append order", async () => {
    log = await openPostgresLog({ url: PG_URL, schema: schema(), shards: 1 });
    await Promise.all(Array.from({ length: 500 }, (_, i) => log.append(0, { stream: `s${i % 7}`, body: body(String(i)) })));
    const { appended, syncs } = log.stats();
    expect(appended[0]).to.equal(500);
    expect(syncs[0]).to.be.at.most(2);
    expect((await storedEntries(log.schema, 0)).map((e) => e.body)).to.deep.equal(Array.from({ length: 500 }, (_, i) => String(i)));
  });

  it("tells appendThen waiters after the commit, in append order, alongside awaited appends", async () => {
    log = await openPostgresLog({ url: PG_URL, schema: schema(), shards: 1 });
    const told: string[] = [];
    const waiter = (name: string) => ({ appended: () => told.push(name), failed: (e: Error) => told.push(`${name}: ${e.message}`) });
    log.appendThen(0, "a", body("1"), waiter("a-1"));
    const awaited = log.append(0, { stream: "b", body: body("2") });
    log.appendThen(0, "a", body("3"), waiter("a-3"));
    expect(told).to.deep.equal([]);
    await awaited;
    expect(told).to.deep.equal(["a-1", "a-3"]);
    expect((await storedEntries(log.schema, 0)).map((e) => e.body)).to.deep.equal(["1", "2", "3"]);
  });

  it("gathers appends made while a batch is in flight into the next batch", async () => {
    log = await openPostgresLog({ url: PG_URL, schema: schema(), shards: 1 });
    await log.append(0, { stream: "warm", body: body("up") });
    const before = log.stats().syncs[0]!;
    const first = log.append(0, { stream: "a", body: body("first") });
    await Promise.resolve();
    const rest = Array.from({ length: 100 }, (_, i) => log.append(0, { stream: "b", body: body(String(i)) }));
    await Promise.all([first, ...rest]);
    expect(log.stats().syncs[0]! - before).to.equal(2);
  });

  it("stores each batch as one row in a transaction of its own, as the rows' xmin shows", async () => {
    log = await openPostgresLog({ url: PG_URL, schema: schema(), shards: 2 });
    await Promise.all(Array.from({ length: 300 }, (_, i) => log.append(i % 2, { stream: `r${i}`, body: body("x") })));
    await Promise.all(Array.from({ length: 300 }, (_, i) => log.append(i % 2, { stream: `r${i}`, body: body("y") })));
    const rows = await sql<{ shard: number; rows: number; entries: number; transactions: number }>(
      `SELECT shard, count(*)::integer AS rows, sum(cardinality(streams))::integer AS entries, count(DISTINCT xmin::text)::integer AS transactions
         FROM "${log.schema}".batches GROUP BY shard ORDER BY shard`,
    );
    const { syncs } = log.stats();
    expect(rows).to.deep.equal([
      { shard: 0, rows: syncs[0], entries: 300, transactions: syncs[0] },
      { shard: 1, rows: syncs[1], entries: 300, transactions: syncs[1] },
    ]);
    expect(syncs[0]! + syncs[1]!).to.be.at.most(6);
    const entries = await storedEntries(log.schema);
    expect(entries.map((e) => [e.shard, e.stream, e.body])).to.deep.equal([
      ...Array.from({ length: 150 }, (_, i) => [0, `r${i * 2}`, "x"]),
      ...Array.from({ length: 150 }, (_, i) => [0, `r${i * 2}`, "y"]),
      ...Array.from({ length: 150 }, (_, i) => [1, `r${i * 2 + 1}`, "x"]),
      ...Array.from({ length: 150 }, (_, i) => [1, `r${i * 2 + 1}`, "y"]),
    ]);
  });

  it("stores stream keys that need quoting in SQL text, in batches with and without drops", async () => {
    log = await openPostgresLog({ url: PG_URL, schema: schema(), shards: 1 });
    const keys = ['say "hi"', "back\\slash", "{a,b}", "NULL", "日本語 🙂", "k".repeat(5_000)];
    await Promise.all(keys.map((stream, i) => log.append(0, { stream, body: body(`v${i}`) })));
    await Promise.all([
      log.append(0, { stream: keys[0]!, body: body("dropped") }),
      log.drop(0, [keys[0]!, keys[4]!]),
      log.append(0, { stream: keys[4]!, body: body("after") }),
    ]);
    for (const [i, stream] of keys.entries()) {
      const expected = i === 0 ? [] : i === 4 ? ["after"] : [`v${i}`];
      expect(
        (await log.read(0, stream)).map((e) => Buffer.from(e.body).toString()),
        stream.slice(0, 20),
      ).to.deep.equal(expected);
    }
    const scanned: string[] = [];
    for await (const e of log.scan(0)) scanned.push(e.stream);
    expect(scanned).to.deep.equal([keys[1], keys[2], keys[3], keys[5], keys[4]]);
  });

  it("applies a drop in its place among the appends of one batch", async () => {
    log = await openPostgresLog({ url: PG_URL, schema: schema(), shards: 1 });
    await log.appendAll(0, [
      { stream: "x", body: body("old") },
      { stream: "y", body: body("keep") },
    ]);
    await Promise.all([
      log.append(0, { stream: "x", body: body("cancelled") }),
      log.drop(0, ["x"]),
      log.append(0, { stream: "x", body: body("new") }),
    ]);
    const read = await log.read(0, "x");
    expect(read.map((e) => Buffer.from(e.body).toString())).to.deep.equal(["new"]);
    expect(log.streams(0)).to.deep.equal(["y", "x"]);
    expect(log.stats().liveEntries[0]).to.equal(2);
  });
});
