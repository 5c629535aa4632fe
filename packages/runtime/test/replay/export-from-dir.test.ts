import "reflect-metadata";
import { expect } from "chai";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { aesGcm } from "../../src/codec/aes-gcm.js";
import { RejectedError, StorageError } from "../../src/core/errors.js";
import type { Engine } from "../../src/engine/engine.js";
import type { RecoveryCutEvent } from "../../src/engine/engine-events.js";
import { DATA_DIR_STATUSES, DataDirReader } from "../../src/replay/data-dir-reader.js";
import type { ExportedRecord } from "../../src/replay/export-format.js";
import { RUN_STATUSES } from "../../src/core/status.js";
import { exportFromDir } from "../../src/replay/export-from-dir.js";
import { Replayer } from "../../src/replay/replayer.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { framesOf } from "../storage/support/segments.js";
import { eventually, openLocal, tempDir } from "./helpers.js";

@Workflow("w")
class W {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<number> {
    const a = await this.ctx.step("a", async () => n);
    await this.ctx.waitFor("go");
    return a;
  }
}

/** Journals a signal and a step for every item until it is told to stop. */
@Workflow()
class Collector {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    let total = 0;
    for (;;) {
      const item = await this.ctx.waitFor<number>("item");
      if (item === undefined || item < 0) return total;
      total = await this.ctx.step("add", async () => total + item);
    }
  }
}

@Workflow()
class Tagged {
  constructor(private readonly ctx: Ctx) {}
  async run(input: { region: string; amount: number }): Promise<void> {
    this.ctx.setAttributes(input);
    await this.ctx.waitFor("go");
  }
}

/** Starts a child of type `w` and waits for it. */
@Workflow()
class Parent {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<number> {
    return (await this.ctx.executeChild<number>("w", `${this.ctx.workflowId}/child`, n)) ?? 0;
  }
}

@Workflow({ patches: ["v2", "v3"] })
class Patched {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<number> {
    const a = this.ctx.patched("v2") ? await this.ctx.step("a", async () => n) : n;
    this.ctx.patched("v3");
    await this.ctx.waitFor("go");
    return a;
  }
}

describe("exportFromDir", () => {
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine | undefined;
  beforeEach(() => {
    tmp = tempDir("export");
  });
  afterEach(async () => {
    await engine?.shutdown();
    engine = undefined;
    tmp.cleanup();
  });

  it("exports one run or many from a data directory while its engine runs, ready to replay", async () => {
    engine = await openLocal(tmp.dir, { workflows: [W] });
    for (let i = 0; i < 3; i++) await engine.start(W, `e-${i}`, i);
    await eventually("every run waiting", async () => (await engine!.list()).every((r) => r.status === "suspended"));

    const one = await exportFromDir(tmp.dir, { id: "e-1", limit: 1 });
    expect(one).to.have.length(1);
    expect(one[0]).to.include({ workflowId: "e-1", type: "w", runId: 1, status: "running" });
    expect(one[0]?.records.map((r) => r.kind)).to.deep.equal(["start", "step"]);
    expect(one[0]?.records[1]?.payload).to.deep.equal({ plain: 1 });

    const all = await exportFromDir(tmp.dir, { limit: 10 });
    expect(all.map((j) => j.workflowId).sort()).to.deep.equal(["e-0", "e-1", "e-2"]);
    const replayer = new Replayer().register(W);
    for (const journal of all) {
      const r = await replayer.replay(journal);
      expect(r, journal.workflowId).to.include({ ok: true, finished: false });
    }
    expect(await exportFromDir(tmp.dir, { limit: 2 })).to.have.length(2);
    expect(await exportFromDir(tmp.dir, { id: "nobody" })).to.deep.equal([]);

    // The engine is unaffected: it still appends and finishes.
    await engine.run("e-1").signal("go");
    expect(await engine.run("e-1").result()).to.equal(1);
    const [done] = await exportFromDir(tmp.dir, { id: "e-1" });
    expect(done).to.include({ status: "ok" });
    expect(done?.records.at(-1)).to.deep.include({ kind: "finish", status: "ok", payload: { plain: 1 } });
  });

  it("reads only complete records, a consistent prefix, while the engine appends", async function () {
    this.timeout(30_000);
    engine = await openLocal(tmp.dir, { workflows: [Collector] });
    const run = await engine.start(Collector, "c-1", undefined);
    let sending = true;
    let sent = 0;
    const sender = (async () => {
      while (sending) {
        await run.signal("item", 1);
        sent++;
      }
    })();
    const seen: ExportedRecord[][] = [];
    const deadline = Date.now() + 1500;
    while (Date.now() < deadline || seen.length < 5) {
      const [journal] = await exportFromDir(tmp.dir, { id: "c-1" });
      seen.push([...(journal?.records ?? [])]);
    }
    sending = false;
    await sender;
    await run.signal("item", -1);
    expect(await run.result()).to.equal(sent);

    const [final] = await exportFromDir(tmp.dir, { id: "c-1" });
    const full = final!.records;
    expect(full.length).to.be.greaterThan(2 * sent);
    let previous = 0;
    for (const records of seen) {
      expect(records.length).to.be.at.least(previous);
      previous = records.length;
      expect(records, "every export is a prefix of the final journal").to.deep.equal(full.slice(0, records.length));
    }
    expect(seen.at(-1)!.length).to.be.greaterThan(seen[0]!.length);
    const r = await new Replayer().register(Collector).replay(final!);
    expect(r).to.include({ ok: true, finished: true });
  });

  it("takes no lock: a second writer is still refused while the engine runs", async () => {
    engine = await openLocal(tmp.dir, { workflows: [W] });
    await engine.start(W, "e-0", 0);
    const reader = await DataDirReader.open(tmp.dir);
    try {
      const err = await openLocal(tmp.dir, { workflows: [W] }).then(
        async (e) => {
          await e.shutdown();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(StorageError);
      expect((err as Error).message).to.contain(String(process.pid));
      await engine.start(W, "e-1", 1);
      expect(reader.status("e-0")).to.include({ id: "e-0", type: "w", status: "running" });
      expect(reader.status("e-1"), "a snapshot of the moment it opened").to.equal(undefined);
    } finally {
      await reader.close();
    }
  });

  it("reports a folder that is not a data directory", async () => {
    const plain = join(tmp.dir, "plain");
    mkdirSync(plain);
    const err = await exportFromDir(plain).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain(plain)
      .and.contain("manifest");
    const missing = await exportFromDir(join(tmp.dir, "absent")).catch((e: unknown) => e);
    expect(missing).to.be.instanceOf(StorageError);
  });

  it("tells onEvent of a write torn by a crash that it left out, and refuses a damaged shard", async () => {
    engine = await openLocal(tmp.dir, { workflows: [W] });
    await engine.start(W, "e-0", 7);
    await eventually("the run waiting", async () => (await engine!.status("e-0"))?.status === "suspended");
    await engine.shutdown();
    engine = undefined;
    // The shard the run went to is the one whose clean-close mark records data.
    const shard = [0, 1].find((n) => readdirSync(join(tmp.dir, `shard-000${n}`)).some((f) => /^clean-\d+-[1-9]/.test(f)))!;
    const folder = join(tmp.dir, `shard-000${shard}`);
    for (const name of readdirSync(folder)) if (name.startsWith("clean-")) rmSync(join(folder, name));
    const file = join(
      folder,
      readdirSync(folder)
        .filter((n) => n.endsWith(".log"))
        .sort()
        .at(-1)!,
    );
    const end = framesOf(file).at(-1)!.end;
    const bytes = readFileSync(file);
    bytes.set([23, 0, 0, 0, 1, 2, 3, 4, 4], end);
    writeFileSync(file, bytes);

    const told: RecoveryCutEvent[] = [];
    const journals = await exportFromDir(tmp.dir, { onEvent: (e) => told.push(e) });
    expect(journals.map((j) => j.workflowId)).to.deep.equal(["e-0"]);
    expect(told).to.have.length(1);
    expect(told[0]).to.include({ kind: "recovery-cut", shard, segment: file, offset: end, discardedBytes: 9 });

    const first = framesOf(file)[1]!;
    bytes[first.end - 1] = bytes[first.end - 1]! ^ 0x01;
    writeFileSync(file, bytes);
    const err = await exportFromDir(tmp.dir).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain(`shard ${shard}`)
      .and.contain(file);
  });

  describe("DataDirReader", () => {
    it("lists runs as listWhere does, newest first, with their search attributes", async () => {
      engine = await openLocal(tmp.dir, { workflows: [Tagged, W] });
      await engine.start(Tagged, "t-eu", { region: "eu", amount: 5 });
      await engine.start(Tagged, "t-us", { region: "us", amount: 50 });
      await engine.start(W, "w-1", 1);
      await eventually("the attributes", async () => (await engine!.listWhere({ region: "us" })).length === 1);
      await engine.run("w-1").signal("go");
      await engine.run("w-1").result();

      const reader = await DataDirReader.open(tmp.dir);
      try {
        expect(reader.list().map((r) => r.id)).to.have.members(["t-eu", "t-us", "w-1"]);
        expect(reader.list({ region: "eu" }).map((r) => r.id)).to.deep.equal(["t-eu"]);
        expect(reader.list({ amount: { gte: 10 } }).map((r) => r.id)).to.deep.equal(["t-us"]);
        expect(reader.list({ type: "w", status: "ok" }).map((r) => r.id)).to.deep.equal(["w-1"]);
        expect(reader.list({}, 1)).to.have.length(1);
        expect(reader.status("t-us")).to.deep.include({ attributes: { region: "us", amount: 50 }, records: 2, status: "running" });
        const w = reader.status("w-1");
        expect(w).to.include({ status: "ok", records: 4 });
        expect(w?.endedAt).to.be.a("number");
        expect(() => reader.list({ amount: { near: 3 } })).to.throw(RejectedError, "near");
      } finally {
        await reader.close();
      }
    });

    it("gives a run's patch records in journal order, without a cipher for sealed payloads", async () => {
      engine = await openLocal(tmp.dir, { workflows: [Patched] }, (c) => c.codec(aesGcm({ k1: new Uint8Array(32).fill(3) })));
      await engine.start(Patched, "p-1", 7);
      await eventually("the run waiting", async () => (await engine!.run("p-1").status()).status === "suspended");

      const reader = await DataDirReader.open(tmp.dir);
      try {
        const patches = reader.patches("p-1");
        expect(patches?.map((p) => p.id)).to.deep.equal(["v2", "v3"]);
        expect(patches?.[0]?.at).to.be.a("number").within(reader.status("p-1")!.startedAt, Date.now());
        expect(reader.patches("nobody")).to.equal(undefined);
      } finally {
        await reader.close();
      }
    });

    it("shows the latest run of an ID when finished journals are kept", async () => {
      engine = await openLocal(tmp.dir, { workflows: [W] });
      const first = await engine.start(W, "again", 1);
      await first.signal("go");
      await first.result();
      await engine.start(W, "again", 2);
      await eventually("the second run waiting", async () => (await engine!.run("again").status()).status === "suspended");
      const [journal] = await exportFromDir(tmp.dir, { id: "again" });
      expect(journal).to.include({ runId: 2, status: "running" });
      expect(journal?.records[1]?.payload).to.deep.equal({ plain: 2 });
    });
    it("describes the schedules as the engine does, from their streams, without a cipher", async () => {
      // Sealed inputs: the reader leaves schedule inputs unread, so it needs no keys.
      engine = await openLocal(tmp.dir, { workflows: [W] }, (c) => c.codec(aesGcm({ k1: Buffer.alloc(32, 3) })));
      const hourly = await engine.schedule("hourly", { workflow: W, every: "1h", input: 7 });
      await hourly.trigger();
      await hourly.pause();
      const daily = await engine.schedule("daily", { workflow: "w", cron: "30 4 * * *", timezone: "Europe/Paris" });
      await engine.schedule("gone", { workflow: W, every: "1m", paused: true });
      await (await engine.schedule("gone", { workflow: W, every: "1m" })).delete();
      const expected = [await daily.describe(), await hourly.describe()];

      const reader = await DataDirReader.open(tmp.dir);
      try {
        const schedules = reader.schedules();
        expect(schedules.map((s) => s.name)).to.deep.equal(["daily", "hourly"]);
        expect(schedules[1]).to.deep.include({ workflow: "w", every: 3_600_000, paused: true, started: 1, nextTimes: [] });
        expect(schedules[1]?.recentRuns).to.have.length(1).and.to.deep.equal(expected[1]?.recentRuns);
        expect(schedules[0]).to.deep.include({ cron: "30 4 * * *", timezone: "Europe/Paris", paused: false, started: 0 });
        expect(schedules[0]?.nextTimes).to.deep.equal(expected[0]?.nextTimes);
      } finally {
        await reader.close();
      }
    });

    it("names the parent of a child run, and the schedule and instant of a scheduled run", async () => {
      engine = await openLocal(tmp.dir, { workflows: [W, Parent] });
      await engine.start(Parent, "p", 4);
      await eventually("the child waiting", async () => (await engine!.status("p/child"))?.status === "suspended");
      const hourly = await engine.schedule("hourly", { workflow: W, every: "1h", input: 7, paused: true });
      await hourly.trigger();
      await eventually("the triggered run", async () => (await hourly.describe()).recentRuns.length === 1);
      const [triggered] = (await hourly.describe()).recentRuns;
      await engine.start(W, "hourly@later", 1);
      await engine.start(W, "other@1700000000000", 1);

      const reader = await DataDirReader.open(tmp.dir);
      try {
        expect(reader.status("p/child")?.parent).to.deep.equal({ id: "p", runId: 1 });
        expect(reader.status("p")).to.not.have.property("parent");
        const instant = Number(triggered?.slice("hourly@".length));
        expect(reader.status(triggered!)?.schedule).to.deep.equal({ name: "hourly", instant });
        expect(
          reader
            .list({ type: "w" })
            .filter((r) => r.schedule !== undefined)
            .map((r) => r.id),
        ).to.deep.equal([triggered]);
      } finally {
        await reader.close();
      }
    });

    it("offers every status but the two a reader cannot tell from running", () => {
      expect(DATA_DIR_STATUSES).to.deep.equal(RUN_STATUSES.filter((s) => s !== "suspended" && s !== "parked"));
      expect(DATA_DIR_STATUSES).to.include.members(["running", "ok", "failed", "cancelled", "terminated"]);
    });
  });
});
