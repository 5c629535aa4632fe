import { expect } from "chai";
import pg from "pg";
import { ConfigError, StorageError } from "../../src/core/errors.js";
import { LATEST_VERSION, MIGRATIONS, migrate } from "../../src/storage/postgres/migrations.js";
import { openPostgresLog } from "../../src/storage/postgres/pg-log.js";
import { tablesOf } from "../../src/storage/postgres/schema.js";
import { PG_URL, sql, storedEntries, useSchemas } from "./support/database.js";

describe("PostgreSQL migrations", () => {
  const schema = useSchemas();
  let pool: pg.Pool;
  beforeEach(() => {
    pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  });
  afterEach(() => pool.end());

  it("creates the schema and records every migration on a fresh database", async () => {
    const t = tablesOf(schema());
    const result = await migrate(pool, t);
    expect(result).to.deep.equal({ from: 0, applied: MIGRATIONS.map((m) => m.version) });
    const rows = await sql<{ version: number; name: string }>(`SELECT version, name FROM ${t.migrations} ORDER BY version`);
    expect(rows.map((r) => r.version)).to.deep.equal(MIGRATIONS.map((m) => m.version));
    const tables = await sql<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
      [t.schema],
    );
    expect(tables.map((r) => r.table_name)).to.deep.equal([
      "batches",
      "leases",
      "migrations",
      "owners",
      "permits",
      "rates",
      "replies",
      "requests",
      "settings",
    ]);
  });

  it("does nothing when run again on a schema that is up to date", async () => {
    const t = tablesOf(schema());
    await migrate(pool, t);
    expect(await migrate(pool, t)).to.deep.equal({ from: LATEST_VERSION, applied: [] });
    expect(await sql(`SELECT * FROM ${t.migrations}`)).to.have.length(MIGRATIONS.length);
  });

  it("applies only the migrations a schema lacks, each recorded with it", async () => {
    const t = tablesOf(schema());
    await migrate(pool, t);
    const next = { version: LATEST_VERSION + 1, name: "a note column", sql: () => `ALTER TABLE ${t.settings} ADD COLUMN note text` };
    expect(await migrate(pool, t, [...MIGRATIONS, next])).to.deep.equal({ from: LATEST_VERSION, applied: [next.version] });
    await sql(`INSERT INTO ${t.settings} (key, value, note) VALUES ('k', 'v', 'n')`);
  });

  it("rolls a failing migration back and does not record it", async () => {
    const t = tablesOf(schema());
    await migrate(pool, t);
    const broken = {
      version: LATEST_VERSION + 1,
      name: "half done",
      sql: () => `CREATE TABLE ${t.quoted}.half (x int); SELECT * FROM ${t.quoted}.no_such_table`,
    };
    const err = await migrate(pool, t, [...MIGRATIONS, broken]).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain(`migration ${broken.version} ("half done")`)
      .and.contain(t.schema);
    expect(await sql("SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'half'", [t.schema])).to.deep.equal(
      [],
    );
    expect(await migrate(pool, t)).to.deep.equal({ from: LATEST_VERSION, applied: [] });
  });

  it("lets processes that open one schema at once apply each migration exactly once", async () => {
    const t = tablesOf(schema());
    const results = await Promise.all([1, 2, 3].map(() => migrate(pool, t)));
    expect(results.flatMap((r) => r.applied)).to.deep.equal(MIGRATIONS.map((m) => m.version));
  });

  it("moves a log written one row per entry into batch rows, readable, droppable and in order", async () => {
    const t = tablesOf(schema());
    const before = MIGRATIONS.filter((m) => m.version <= 5);
    expect(await migrate(pool, t, before)).to.deep.equal({ from: 0, applied: [1, 2, 3, 4, 5] });
    await sql(`INSERT INTO ${t.settings} (key, value) VALUES ('shards', '1')`);
    const long = "k".repeat(5_000);
    const streams = ["run-a", "run-b", long, "run-a", long];
    for (const [i, stream] of streams.entries()) {
      await sql(`INSERT INTO ${t.entries} (shard, seq, stream, body) VALUES (0, $1, $2, $3)`, [
        (i + 1) * 10,
        stream,
        Buffer.from(`old-${i}`),
      ]);
    }

    const log = await openPostgresLog({ url: PG_URL, schema: t.schema, claim: "all" });
    try {
      expect(
        await sql("SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'entries'", [t.schema]),
      ).to.deep.equal([]);
      const text = (entries: { body: Uint8Array }[]): string[] => entries.map((e) => Buffer.from(e.body).toString());
      const scanned: string[] = [];
      for await (const e of log.scan(0)) scanned.push(Buffer.from(e.body).toString());
      expect(scanned).to.deep.equal(["old-0", "old-1", "old-2", "old-3", "old-4"]);
      expect(text(await log.read(0, "run-a"))).to.deep.equal(["old-0", "old-3"]);
      expect(text(await log.read(0, long))).to.deep.equal(["old-2", "old-4"]);
      await log.append(0, { stream: "run-a", body: Buffer.from("new") });
      await log.drop(0, [long, "run-b"]);
      expect(text(await log.read(0, "run-a"))).to.deep.equal(["old-0", "old-3", "new"]);
      expect(await log.read(0, long)).to.deep.equal([]);
      expect(log.streams(0)).to.deep.equal(["run-a"]);
      expect((await storedEntries(t.schema)).map((e) => [e.seq, e.body])).to.deep.equal([
        [10, "old-0"],
        [40, "old-3"],
        [51, "new"],
      ]);
    } finally {
      await log.close();
    }
  });

  it("keeps a request asked before requests had fences waiting, with no fence", async () => {
    const t = tablesOf(schema());
    expect(
      await migrate(
        pool,
        t,
        MIGRATIONS.filter((m) => m.version <= 7),
      ),
    ).to.deep.include({ from: 0 });
    await sql(`INSERT INTO ${t.settings} (key, value) VALUES ('shards', '2')`);
    const id = "00000000-0000-4000-8000-000000000002";
    await sql(`INSERT INTO ${t.requests} (id, shard, kind, payload, asker) VALUES ($1, 1, 'signal', '\\x00', 'old')`, [id]);

    const log = await openPostgresLog({ url: PG_URL, schema: t.schema, claim: "all", background: false });
    const { requests } = log.clusterTables();
    try {
      const pending = await requests.pending(1, new Set());
      expect(pending.map((r) => [r.id, r.kind, r.asker, r.fence])).to.deep.equal([[id, "signal", "old", undefined]]);
    } finally {
      await requests.close();
      await log.close();
    }
  });

  it("refuses a schema migrated by newer code with a ConfigError naming schema and versions", async () => {
    const t = tablesOf(schema());
    await migrate(pool, t);
    await sql(`INSERT INTO ${t.migrations} (version, name) VALUES ($1, 'from the future')`, [LATEST_VERSION + 7]);
    const err = await openPostgresLog({ url: PG_URL, schema: t.schema, shards: 1 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message)
      .to.contain(`"${t.schema}" is at migration ${LATEST_VERSION + 7} ("from the future"`)
      .and.contain(`knows migrations up to ${LATEST_VERSION}`)
      .and.contain(t.migrations);
  });

  it("refuses to reopen a schema with another shard count", async () => {
    const name = schema();
    await (await openPostgresLog({ url: PG_URL, schema: name, shards: 3 })).close();
    const err = await openPostgresLog({ url: PG_URL, schema: name, shards: 4 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message)
      .to.contain("created with 3 shards")
      .and.contain("shards: 3");
    const again = await openPostgresLog({ url: PG_URL, schema: name });
    expect(again.shardCount).to.equal(3);
    await again.close();
  });

  it("refuses a schema name that is not a plain identifier", async () => {
    const err = await openPostgresLog({ url: PG_URL, schema: 'x"; DROP TABLE y; --', shards: 1 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConfigError);
  });

  it("names the server when it cannot connect", async () => {
    const err = await openPostgresLog({ url: "postgres://nobody:secret@127.0.0.1:1/none", shards: 1 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain("127.0.0.1:1")
      .and.not.contain("secret");
  });
});
