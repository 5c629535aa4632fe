import { expect } from "chai";
import pg from "pg";
import { readAt } from "../../src/storage/postgres/batch-rows.js";
import { tablesOf } from "../../src/storage/postgres/schema.js";
import { openPostgresLog, type PostgresLog, type PostgresLogOptions } from "../../src/storage/postgres/pg-log.js";
import { PG_URL, sql, storedEntries, useSchemas } from "./support/database.js";

const body = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (entries: readonly { body: Uint8Array }[]): string[] => entries.map((e) => Buffer.from(e.body).toString());

describe("PostgreSQL batch rows", () => {
  const schema = useSchemas();
  let logs: PostgresLog[] = [];
  const open = async (options: Partial<PostgresLogOptions>): Promise<PostgresLog> => {
    const log = await openPostgresLog({ url: PG_URL, shards: 1, leaseMs: 1_000, background: false, ...options });
    logs.push(log);
    return log;
  };
  afterEach(async () => {
    await Promise.allSettled(logs.map((l) => l.close()));
    logs = [];
  });

  /** Three streams interleaved in one batch, so every row holds entries of all three. */
  const interleaved = (log: PostgresLog, rounds: number, size = 1): Promise<void> =>
    log.appendAll(
      0,
      Array.from({ length: rounds * 3 }, (_, i) => ({ stream: `s${i % 3}`, body: body(`${i % 3}:${i}`.padEnd(size, ".")) })),
    );

  it("marks a dropped stream's entries dead in a row that keeps others, and the next holder sees the same", async () => {
    const name = schema();
    const first = await open({ schema: name, owner: "first" });
    await interleaved(first, 4);
    await first.drop(0, ["s1"]);
    const [row] = await sql<{ dead: number[]; n: number }>(`SELECT dead, cardinality(streams) AS n FROM "${name}".batches`);
    expect(row).to.deep.equal({ dead: [2, 5, 8, 11], n: 12 });
    expect(text(await first.read(0, "s1"))).to.deep.equal([]);
    expect(text(await first.read(0, "s2"))).to.deep.equal(["2:2", "2:5", "2:8", "2:11"]);
    await first.close();

    const next = await open({ schema: name, owner: "next" });
    expect(next.streams(0)).to.deep.equal(["s0", "s2"]);
    expect(next.stats().liveEntries[0]).to.equal(8);
    const scanned: string[] = [];
    for await (const e of next.scan(0)) scanned.push(Buffer.from(e.body).toString());
    expect(scanned).to.deep.equal(["0:0", "2:2", "0:3", "2:5", "0:6", "2:8", "0:9", "2:11"]);
    await next.drop(0, ["s0", "s2"]);
    expect(await sql(`SELECT seq FROM "${name}".batches`)).to.deep.equal([]);
  });

  it("finds none of a stream's entries at positions looked up before its drop committed", async () => {
    const name = schema();
    const log = await open({ schema: name });
    // Two rows the drop marks, since they keep "keep", and one it deletes.
    await log.appendAll(0, [
      { stream: "v", body: body("a") },
      { stream: "keep", body: body("k") },
    ]);
    await log.appendAll(0, [
      { stream: "v", body: body("b") },
      { stream: "keep", body: body("k") },
    ]);
    await log.append(0, { stream: "v", body: body("c") });
    const at = await sql<{ row: string; position: number }>(
      `SELECT b.seq AS row, x.position FROM "${name}".batches AS b, unnest(b.streams) WITH ORDINALITY AS x(stream, position)
        WHERE x.stream = 'v' ORDER BY b.seq`,
    );
    const rows = at.map((r) => Number(r.row));
    const positions = at.map((r) => r.position);
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    try {
      expect((await readAt(pool, tablesOf(name), 0, rows, positions)).map(String)).to.deep.equal(["a", "b", "c"]);
      await log.drop(0, ["v"]);
      expect(await readAt(pool, tablesOf(name), 0, rows, positions)).to.deep.equal([]);
    } finally {
      await pool.end();
    }
  });

  it("stores no row for a batch whose every entry a drop in it cancelled, and numbers later entries after it", async () => {
    const name = schema();
    const first = await open({ schema: name, owner: "first" });
    await first.append(0, { stream: "kept", body: body("1") });
    await Promise.all([
      first.append(0, { stream: "x", body: body("cancelled") }),
      first.append(0, { stream: "x", body: body("cancelled too") }),
      first.drop(0, ["x"]),
    ]);
    expect(await sql(`SELECT seq FROM "${name}".batches ORDER BY seq`)).to.deep.equal([{ seq: "1" }]);
    await first.append(0, { stream: "kept", body: body("2") });
    await first.close();

    const next = await open({ schema: name, owner: "next" });
    await next.append(0, { stream: "kept", body: body("3") });
    expect((await storedEntries(name)).map((e) => [e.seq, e.body])).to.deep.equal([
      [1, "1"],
      [4, "2"],
      [5, "3"],
    ]);
    expect(text(await next.read(0, "kept"))).to.deep.equal(["1", "2", "3"]);
    expect(next.streams(0)).to.deep.equal(["kept"]);
  });

  it("reads a stream of a shard it does not hold by looking through every row", async () => {
    const name = schema();
    const holder = await open({ schema: name, owner: "holder" });
    await interleaved(holder, 3);
    await holder.append(0, { stream: "s0", body: body("later") });
    await holder.drop(0, ["s1"]);
    const reader = await open({ schema: name, owner: "reader" });
    expect(reader.ownedShards()).to.deep.equal([]);
    expect(text(await reader.read(0, "s0"))).to.deep.equal(["0:0", "0:3", "0:6", "later"]);
    expect(text(await reader.read(0, "s1"))).to.deep.equal([]);
    expect(text(await reader.read(0, "missing"))).to.deep.equal([]);
  });

  it("rewrites a mostly dead row without its dead bodies on compact, keeping every live entry's place", async () => {
    const name = schema();
    const log = await open({ schema: name });
    await interleaved(log, 50, 100);
    await log.append(0, { stream: "s0", body: body("tail") });
    const sizeOf = async (): Promise<number[]> =>
      (await sql<{ size: number }>(`SELECT octet_length(body) AS size FROM "${name}".batches ORDER BY seq`)).map((r) => r.size);
    expect(await sizeOf()).to.deep.equal([15_000, 4]);
    const before = await storedEntries(name);

    await log.drop(0, ["s1"]);
    expect(await log.compact(0), "one live stream of three is not enough to rewrite").to.equal(0);
    await log.drop(0, ["s2"]);
    expect(await log.compact(0)).to.equal(10_000);
    expect(await sizeOf()).to.deep.equal([5_000, 4]);
    expect(await log.compact(0)).to.equal(0);

    const kept = before.filter((e) => e.stream === "s0");
    expect((await storedEntries(name)).map((e) => [e.seq, e.body])).to.deep.equal(kept.map((e) => [e.seq, e.body]));
    expect(text(await log.read(0, "s0"))).to.deep.equal(kept.map((e) => e.body));
    await log.drop(0, ["s0"]);
    expect(await log.compact(0)).to.equal(5_004);
    expect(await sizeOf()).to.deep.equal([]);
  });

  it("scans rows past one page, rows of several MiB among them, in order", async () => {
    const name = schema();
    // Hundreds of inserts with no renewal running: the lease must outlast them on a loaded machine.
    const log = await open({ schema: name, leaseMs: 30_000 });
    for (let i = 0; i < 300; i++) await log.append(0, { stream: `r${i % 4}`, body: body(String(i)) });
    const big = Buffer.alloc(6 * 1024 * 1024, 7);
    for (let i = 0; i < 4; i++) await log.append(0, { stream: "big", body: big });
    const seen: string[] = [];
    let bigs = 0;
    for await (const batch of log.scanBatches(0)) {
      for (const e of batch) {
        if (e.stream === "big") {
          expect(Buffer.from(e.body).equals(big)).to.equal(true);
          bigs++;
        } else seen.push(Buffer.from(e.body).toString());
      }
    }
    expect(seen).to.deep.equal(Array.from({ length: 300 }, (_, i) => String(i)));
    expect(bigs).to.equal(4);
  });
});
