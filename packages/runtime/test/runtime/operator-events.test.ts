import "reflect-metadata";
import { expect } from "chai";
import fs from "node:fs";
import path from "node:path";
import { ConfigError, NonDeterminismError, StorageError } from "../../src/core/errors.js";
import type { Logger, LogLevel } from "../../src/core/logger.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import type { EngineEvent } from "../../src/index.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { freshSchema, PG_URL, sql } from "../postgres/support/database.js";
import { MemoryFileLayer } from "../storage/support/memory-file-layer.js";
import { framesOf, segmentFiles } from "../storage/support/segments.js";
import { eventually, sleep, tempDir } from "./harness.js";

interface Line {
  level: LogLevel;
  fields: Record<string, unknown>;
  message: string | undefined;
}

/** A logger of pino's shape that keeps what it was given. */
function recordingLogger(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: LogLevel) =>
    (fields: object, message?: string): void =>
      void lines.push({ level, fields: fields as Record<string, unknown>, message });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

@Workflow("ops-echo")
class Echo {
  constructor(private readonly ctx: Ctx) {}
  async run(text: string): Promise<string> {
    return this.ctx.step("echo", async () => text);
  }
}

@Workflow("ops-endless")
class Endless {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    let n = 0;
    for (;;) n = await this.ctx.step("count", async () => n + 1);
  }
}

@Workflow("ops-unbuildable")
class Unbuildable {
  constructor(readonly ctx: Ctx) {
    throw new Error("the payments client has no API key");
  }
  async run(): Promise<void> {}
}

let renamed = false;

@Workflow("ops-fickle")
class Fickle {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    await this.ctx.step(renamed ? "refund" : "charge", async () => 1);
    return (await this.ctx.waitFor<string>("go")) ?? "";
  }
}

describe("engine events and the logger", function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => {
    dir = tempDir("ops-events");
    renamed = false;
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("logs a torn tail that recovery cut, with its shard, segment, offset and bytes", async () => {
    const first = await Engine.open(Config.local(dir).shards(1), { workflows: [Echo] });
    await (await first.start(Echo, "e-1", "one")).result();
    await first.shutdown();
    const file = segmentFiles(dir).at(-1)!;
    for (const name of fs.readdirSync(path.dirname(file))) if (name.startsWith("clean-")) fs.rmSync(path.join(path.dirname(file), name));
    const end = framesOf(file).at(-1)!.end;
    const fd = fs.openSync(file, "r+");
    fs.writeSync(fd, Buffer.from([23, 0, 0, 0, 1, 2, 3, 4, 4, 7]), 0, 10, end);
    fs.closeSync(fd);

    const logger = recordingLogger();
    const engine = await Engine.open(Config.local(dir).shards(1).logger(logger), { workflows: [Echo] });
    try {
      expect(logger.lines).to.have.length(1);
      const [line] = logger.lines;
      expect(line!.level).to.equal("warn");
      expect(line!.fields).to.deep.equal({ event: "recovery-cut", shard: 0, segment: file, offset: end, bytes: 10 });
      expect(line!.message).to.contain(`shard 0 at ${file}:${end}`).and.contain("10 bytes");
    } finally {
      await engine.shutdown();
    }
  });

  it("tells listeners and the logger once that a failed sync made the shard fatal", async () => {
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    const logger = recordingLogger();
    const engine = await Engine.open(Config.local("/data").shards(1).logger(logger), { workflows: [Endless], fileLayer: disk });
    const told: EngineEvent[] = [];
    engine.on("event", (e) => told.push(e));
    const run = await engine.start(Endless, "endless", undefined);
    await sleep(20);
    disk.failNextSync = true;
    expect(await run.result().catch((e: unknown) => e)).to.be.instanceOf(StorageError);
    await engine.start(Echo, "later", "x").catch(() => undefined);
    expect(told.map((e) => e.kind)).to.deep.equal(["shard-fatal"]);
    const fatal = told[0] as Extract<EngineEvent, { kind: "shard-fatal" }>;
    expect(fatal.shard).to.equal(0);
    expect(fatal.error).to.be.instanceOf(StorageError);
    expect(fatal.error.message).to.contain("EIO");
    const line = logger.lines.find((l) => l.fields.event === "shard-fatal");
    expect(line?.level).to.equal("error");
    expect(line?.fields.err).to.equal(fatal.error);
    expect(line?.message).to.contain("shard 0 failed");
    await engine.shutdown().catch(() => undefined);
  });

  it("reports a run whose workflow class cannot be constructed, naming the run and the cause", async () => {
    const logger = recordingLogger();
    const engine = await Engine.open(Config.memory().logger(logger), { workflows: [Unbuildable] });
    const told: EngineEvent[] = [];
    engine.on("event", (e) => told.push(e));
    const run = await engine.start(Unbuildable, "u-1", undefined);
    expect(await run.result().catch((e: unknown) => e)).to.be.instanceOf(ConfigError);
    expect(told).to.have.length(1);
    expect(told[0]).to.deep.include({
      kind: "run-stopped",
      reason: "construct-failed",
      workflowId: "u-1",
      workflowType: "ops-unbuildable",
      runId: 1,
    });
    expect((told[0] as { error: Error }).error.message).to.contain("no API key");
    expect(logger.lines.map((l) => [l.level, l.fields.event, l.fields.workflowId])).to.deep.equal([["error", "run-stopped", "u-1"]]);
    await engine.shutdown();
  });

  it("reports a non-determinism that stopped a run replayed after a restart", async () => {
    const before = await Engine.open(Config.local(dir).shards(1), { workflows: [Fickle] });
    await before.start(Fickle, "f-1", undefined);
    await eventually("the wait", async () => (await before.status("f-1"))?.status === "suspended");
    await before.shutdown();

    renamed = true;
    const told: EngineEvent[] = [];
    const after = await Engine.open(Config.local(dir).shards(1), { workflows: [Fickle], onEvent: (e) => told.push(e) });
    try {
      expect(
        await after
          .run("f-1")
          .result()
          .catch((e: unknown) => e),
      ).to.be.instanceOf(NonDeterminismError);
      expect(told.map((e) => e.kind === "run-stopped" && [e.reason, e.workflowId])).to.deep.equal([["non-determinism", "f-1"]]);
      expect((told[0] as { error: Error }).error.message)
        .to.contain("'charge'")
        .and.contain("'refund'");
    } finally {
      await after.shutdown();
    }
  });

  it("keeps going when a listener throws, and stops telling a listener taken off", async () => {
    const logger = recordingLogger();
    const engine = await Engine.open(Config.memory().logger(logger), { workflows: [Unbuildable] });
    const seen: string[] = [];
    const quiet = (e: EngineEvent): void => void seen.push(e.kind);
    engine.on("event", () => {
      throw new Error("listener bug");
    });
    engine.on("event", quiet);
    await (await engine.start(Unbuildable, "u-1", undefined)).result().catch(() => undefined);
    engine.off("event", quiet);
    await (await engine.start(Unbuildable, "u-2", undefined)).result().catch(() => undefined);
    expect(seen).to.deep.equal(["run-stopped"]);
    expect(logger.lines.filter((l) => l.message?.includes("listener threw"))).to.have.length(2);
    await engine.shutdown();
  });

  it("refuses a logger without the four methods", () => {
    expect(() => Config.memory().logger({ info() {} } as unknown as Logger)).to.throw(ConfigError, /debug, info, warn and error/);
  });
});

describe("engine events on PostgreSQL", function () {
  this.timeout(30_000);
  let schema: string;
  beforeEach(() => {
    schema = freshSchema();
  });
  afterEach(async () => {
    await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  it("tells of a lease renewal the blocked event loop made late, and of a lease another owner took", async () => {
    const logger = recordingLogger();
    // Renewals come every third of the lease, and a lease is kept until nine tenths of it from its
    // grant: a block of two thirds right after the open's grant makes the next renewal at least a third
    // late, and leaves 700 ms between the grant and the block before the lease runs out instead (with
    // the 900 ms lease this test once used, 60 ms, which a loaded machine often took).
    const engine = await Engine.open(Config.postgres(PG_URL, { schema, leaseMs: 3_000, owner: "ops" }).shards(1).logger(logger), {
      workflows: [Echo],
    });
    const told: EngineEvent[] = [];
    engine.on("event", (e) => told.push(e));
    try {
      const until = Date.now() + 2_000;
      while (Date.now() < until);
      await eventually("a late renewal", () => told.some((e) => e.kind === "lease-late"));
      const late = told.find((e) => e.kind === "lease-late") as Extract<EngineEvent, { kind: "lease-late" }>;
      expect(late.owner).to.equal("ops");
      expect(late.leaseMs).to.equal(3_000);
      expect(late.lateMs).to.be.at.least(1_000);

      await sql(`UPDATE "${schema}".leases SET owner = 'thief', epoch = epoch + 1 WHERE shard = 0`);
      await eventually("the lost lease", () => told.some((e) => e.kind === "lease-lost"));
      expect(told.find((e) => e.kind === "lease-lost")).to.deep.include({ kind: "lease-lost", owner: "ops", shard: 0, reason: "taken" });
      expect(logger.lines.map((l) => l.fields.event)).to.include.members(["lease-late", "lease-lost"]);
    } finally {
      await engine.shutdown().catch(() => undefined);
    }
  });
});
