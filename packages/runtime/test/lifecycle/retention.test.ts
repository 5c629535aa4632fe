import { expect } from "chai";
import { NotFoundError } from "../../src/core/errors.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { onEachEngine, tempDir } from "../runtime/harness.js";
import { rmSync } from "node:fs";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { Batch, Debounce } from "../../src/engine/flow-rules.js";
import { freshSchema, PG_URL, sql } from "../postgres/support/database.js";

@Workflow("report")
class Report {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<string> {
    return this.ctx.step("render", async () => "x".repeat(n));
  }
}

@Workflow("waiting")
class Waiting {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<number> {
    await this.ctx.step("begin", async () => n);
    return (await this.ctx.waitFor<number>("go")) ?? -1;
  }
}

@Workflow("tally")
class Tally {
  async run(events: number[]): Promise<number> {
    return events.length;
  }
}

/** Returns its step's idempotency key. */
@Workflow()
class Keyed {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    return this.ctx.step("effect", async () => this.ctx.key());
  }
}

onEachEngine("retention", (kind) => {
  it("forgets finished runs once their retention has passed, keeping unfinished and recent ones", async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const engine = await kind().open({ workflows: [Report] }, (c) => c.clock(clock).retention("1h"));
    for (let i = 0; i < 3; i++) await (await engine.start(Report, `old-${i}`, 10)).result();
    await clock.advance("30m");
    await (await engine.start(Report, "recent", 10)).result();
    await clock.advance("31m");
    expect(await engine.status("old-0")).to.equal(undefined);
    const forgotten = await engine
      .run("old-0")
      .result()
      .catch((e: unknown) => e);
    expect(forgotten, "the result of a forgotten run").to.be.instanceOf(NotFoundError);
    expect((forgotten as Error).message)
      .to.contain("'old-0'")
      .and.contain("retention");
    expect((await engine.list(10)).map((s) => s.id)).to.deep.equal(["recent"]);
    expect((await engine.status("recent"))?.status).to.equal("ok");
    // A sweep on a networked store may still be running when the clock moves on, so the next
    // sweep is only scheduled then; step the clock until it has run.
    for (let i = 0; i < 50 && (await engine.list(10)).length > 0; i++) {
      await clock.advance("1m");
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await engine.list(10)).to.deep.equal([]);
    expect(clock.now() - start, "not before its retention passed").to.be.at.least(90 * 60_000);
    await engine.shutdown();
  });

  it("gives the steps of an ID's next run other idempotency keys than those of the run retention forgot", async () => {
    const clock = new VirtualClock();
    const engine = await kind().open({ workflows: [Keyed] }, (c) => c.clock(clock).retention("1h"));
    const first = await (await engine.start(Keyed, "keyed-1")).result();
    for (let i = 0; i < 50 && (await engine.status("keyed-1")) !== undefined; i++) {
      await clock.advance("30m");
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await engine.status("keyed-1"), "the run was forgotten").to.equal(undefined);
    const again = await engine.start(Keyed, "keyed-1");
    expect((await again.status()).runId, "the ID starts over at run 1").to.equal(1);
    const second = await again.result();
    expect(second, "the new run's step key").to.not.equal(first);
    await engine.shutdown();
  });

  it("forgets debounce and batch keys whose windows fired before the retention cutoff", async () => {
    const clock = new VirtualClock();
    const engine = await kind().open({ workflows: [Report, Tally] }, (c) => c.clock(clock).retention("1h"));
    const rule = Debounce.of("1m");
    const first = await engine.debounce(Report, "doc", 3, rule, { eventId: "e-1" });
    const batch = await engine.batch(Tally, "tenant", 1, Batch.of(2, "1d"), { eventId: "b-1" });
    await engine.batch(Tally, "tenant", 2, Batch.of(2, "1d"), { eventId: "b-2" });
    await clock.advance("2m");
    expect(await first.result()).to.equal("xxx");
    expect(await batch.result()).to.equal(2);
    // Within the retention, a retried event ID still answers with its fired window's run.
    await clock.advance("30m");
    expect((await engine.debounce(Report, "doc", 3, rule, { eventId: "e-1" })).id).to.equal(first.id);
    expect((await engine.batch(Tally, "tenant", 1, Batch.of(2, "1d"), { eventId: "b-1" })).id).to.equal(batch.id);

    // Past it, the keys are forgotten: the same event IDs open new windows, under new run IDs.
    let again = first.id;
    for (let i = 0; i < 60 && again === first.id; i++) {
      await clock.advance("1m");
      await new Promise((r) => setTimeout(r, 10));
      again = (await engine.debounce(Report, "doc", 3, rule, { eventId: "e-1" })).id;
    }
    expect(again).to.not.equal(first.id);
    expect((await engine.batch(Tally, "tenant", 1, Batch.of(2, "1d"), { eventId: "b-1" })).id).to.not.equal(batch.id);
    await engine.shutdown();
  });
});

describe("retention on disk (local)", () => {
  it("reclaims the space of expired runs and they stay gone after a reopen", async () => {
    const dir = tempDir("retention");
    try {
      const clock = new VirtualClock();
      const config = Config.local(dir)
        .shards(1)
        .segmentBytes(128 * 1024)
        .clock(clock)
        .retention("1h");
      const engine = await Engine.open(config, { workflows: [Report] });
      for (let i = 0; i < 50; i++) await (await engine.start(Report, `big-${i}`, 20_000)).result();
      const log = (engine as unknown as { parts: { log: { stats(): { liveEntries: readonly number[]; bytes: readonly number[] } } } }).parts
        .log;
      expect(log.stats().liveEntries[0]).to.be.greaterThan(100);
      const before = log.stats().bytes[0] as number;
      await clock.advance("2h");
      expect(log.stats().liveEntries[0]).to.equal(0);
      expect(log.stats().bytes[0], "compaction reclaimed the journals").to.be.below(before - 50 * 20_000 * 0.9);
      await engine.shutdown();
      const reopened = await Engine.open(config, { workflows: [Report] });
      expect(await reopened.list(100)).to.deep.equal([]);
      await reopened.shutdown();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("retention on PostgreSQL", () => {
  const schemas: string[] = [];
  after(async () => {
    for (const s of schemas) await sql(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  });

  it("deletes the batch rows of expired runs, rewrites rows they shared with a live run, and they stay gone after a reopen", async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const clock = new VirtualClock();
    const config = Config.postgres(PG_URL, { schema, leaseMs: 1_000 }).shards(1).clock(clock).retention("1h");
    const engine = await Engine.open(config, { workflows: [Report, Waiting] });
    // Started together, the runs' step records share batch rows with the step record of the run
    // that keeps waiting.
    const [waiting, ...reports] = await Promise.all([
      engine.start(Waiting, "waiting", 0),
      ...Array.from({ length: 40 }, (_, i) => engine.start(Report, `big-${i}`, 20_000)),
    ]);
    await Promise.all(reports.map((r) => r.result()));
    const [shared] = await sql<{ n: number }>(
      `SELECT count(*)::integer AS n FROM "${schema}".batches AS b
        WHERE octet_length(b.body) > 20000 AND EXISTS (SELECT 1 FROM unnest(b.streams) AS s WHERE s LIKE 'waiting#%')`,
    );
    expect(shared?.n, "a row holding the waiting run's record and big bodies").to.be.greaterThan(0);
    const stored = async (): Promise<{ rows: number; bytes: number }> => {
      const [row] = await sql<{ rows: number; bytes: string | null }>(
        `SELECT count(*)::integer AS rows, sum(octet_length(body)) AS bytes FROM "${schema}".batches`,
      );
      return { rows: row!.rows, bytes: Number(row!.bytes ?? 0) };
    };
    const before = await stored();
    expect(before.bytes).to.be.greaterThan(40 * 20_000);

    await clock.advance("2h");
    for (let i = 0; i < 50 && (await engine.list(100)).length > 1; i++) {
      await clock.advance("1m");
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await engine.list(100)).map((s) => s.id)).to.deep.equal(["waiting"]);
    // The runs leave the index before their drop and compaction have committed.
    let after = await stored();
    for (let i = 0; i < 50 && after.bytes >= 20_000; i++) {
      await new Promise((r) => setTimeout(r, 20));
      after = await stored();
    }
    expect(after.bytes, "no body of an expired run is left in the table").to.be.below(20_000);
    expect(after.rows).to.be.greaterThan(0);
    await engine.shutdown();

    const reopened = await Engine.open(config, { workflows: [Report, Waiting] });
    expect((await reopened.list(100)).map((s) => s.id)).to.deep.equal(["waiting"]);
    await reopened.run(waiting.id).signal("go", 1);
    expect(await reopened.run(waiting.id).result()).to.equal(1);
    await reopened.shutdown();
  });
});
