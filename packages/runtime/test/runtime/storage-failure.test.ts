import "reflect-metadata";
import { expect } from "chai";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { StorageError } from "../../src/core/errors.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Update, Workflow } from "../../src/workflow/decorators.js";
import { MemoryFileLayer } from "../storage/support/memory-file-layer.js";

/** Steps without end, so a sync fails while steps are appending. */
@Workflow("storage-failure-steps")
class EndlessSteps {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    let n = 0;
    for (;;) n = (await this.ctx.step("count", async () => n + 1)) as number;
  }
}

/** Waits for updates until told to stop. */
@Workflow("storage-failure-updates")
class Tally {
  private n = 0;
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    await this.ctx.waitFor("stop");
    return this.n;
  }

  @Update() add(by: number): number {
    this.n += by;
    return this.n;
  }
}

/** One step, then a signal, then another step. */
@Workflow("storage-failure-signal")
class StepSignalStep {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    const a = (await this.ctx.step("a", async () => "a")) as string;
    const go = (await this.ctx.waitFor("go")) as string;
    return `${a}${go}${(await this.ctx.step("b", async () => "b")) as string}`;
  }
}

function freshDisk(): MemoryFileLayer {
  const disk = new MemoryFileLayer();
  disk.mkdirDurable("/data");
  return disk;
}

const open = (disk: MemoryFileLayer): Promise<Engine> =>
  Engine.open(Config.local("/data").shards(1), { workflows: [EndlessSteps, StepSignalStep, Tally], fileLayer: disk });

describe("a failed sync under running workflows", () => {
  it("rejects the runs' results and every later call with the shard's StorageError, and retries no sync", async () => {
    const disk = freshDisk();
    const engine = await open(disk);
    const run = await engine.start(EndlessSteps, "endless", undefined);
    const outcome = run.result().then(
      () => "finished",
      (e: unknown) => e,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    disk.failNextSync = true;
    const error = await outcome;
    expect(error).to.be.instanceOf(StorageError);
    expect((error as Error).message)
      .to.contain("shard 0")
      .and.contain("EIO");
    const later = await engine.start(StepSignalStep, "later", undefined).catch((e: unknown) => e);
    expect(later).to.be.instanceOf(StorageError);
    expect(disk.syncsAfterFailure).to.equal(0);
    await engine.shutdown().catch(() => undefined);
  });

  it("fails an update-with-start whose start could not be made durable without an unhandled rejection, also beside another start", async () => {
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    const engine = await Engine.open(Config.local("/data").shards(2), { workflows: [Tally], fileLayer: disk });
    const escaped: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void escaped.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      disk.failNextSync = true;
      const outcomes = await Promise.allSettled([
        engine.start(Tally, "tally-a", undefined),
        engine.updateWithStart(Tally, "tally-b", undefined, "add", 1),
      ]);
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      for (const o of outcomes) expect(o.status === "rejected" && o.reason instanceof StorageError, JSON.stringify(o)).to.equal(true);
      expect(escaped.map(String)).to.deep.equal([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      await engine.shutdown().catch(() => undefined);
    }
  });

  it("fails a signal whose record could not be made durable, stops the engine, and keeps what was acknowledged", async () => {
    const disk = freshDisk();
    let engine = await open(disk);
    const run = await engine.start(StepSignalStep, "signalled", undefined);
    for (let i = 0; i < 100 && (await engine.describe("signalled"))!.journal.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    const before = (await engine.describe("signalled"))!.journal.map((r) => r.kind);
    expect(before).to.deep.equal(["start", "step"]);
    const result = run.result().catch((e: unknown) => e);

    disk.failNextSync = true;
    const refused = await engine
      .run("signalled")
      .signal("go", "!")
      .catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(StorageError);
    expect(await result).to.equal(refused);
    await engine.shutdown().catch(() => undefined);

    // The refused signal's record may or may not have reached the disk (its sync failed, not its
    // write); what was acknowledged is there, and the caller, told it failed, sends it again.
    engine = await open(disk);
    const after = (await engine.describe("signalled"))!.journal.map((r) => r.kind);
    expect(after.slice(0, 2)).to.deep.equal(["start", "step"]);
    await engine.run("signalled").signal("go", "!");
    expect(await engine.run("signalled").result()).to.equal("a!b");
    await engine.shutdown();
  });

  for (const how of ["update", "updateWithStart"] as const) {
    it(`fails an ${how} whose record could not be made durable with the StorageError, leaving no rejection unhandled`, async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (e: unknown): void => void unhandled.push(e);
      process.on("unhandledRejection", onUnhandled);
      try {
        const disk = freshDisk();
        const engine = await open(disk);
        if (how === "update") await engine.start(Tally, "tally", undefined);
        disk.failNextSync = true;
        const refused =
          how === "update"
            ? await engine
                .run("tally")
                .update("add", 1)
                .catch((e: unknown) => e)
            : await engine.updateWithStart(Tally, "tally", undefined, "add", 1).catch((e: unknown) => e);
        expect(refused).to.be.instanceOf(StorageError);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(unhandled).to.deep.equal([]);
        await engine.shutdown().catch(() => undefined);
      } finally {
        process.off("unhandledRejection", onUnhandled);
      }
    });
  }
});
