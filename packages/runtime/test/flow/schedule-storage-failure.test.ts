import "reflect-metadata";
import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { shardOf } from "../../src/core/ids.js";
import { scheduleRunId } from "../../src/journal/schedule-state.js";
import { MemoryFileLayer, Random } from "../storage/support/memory-file-layer.js";

@Workflow("schedule-storage-failure-job")
class Job {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.sleep("1h");
    return this.ctx.workflowId;
  }
}

describe("a schedule on a disk whose sync fails", () => {
  it("rejects trigger() with the StorageError when the start of its run could not be made durable", async () => {
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    const clock = new VirtualClock(Date.UTC(2030, 0, 1));
    const engine = await Engine.open(Config.local("/data").shards(1).clock(clock), { workflows: [Job], fileLayer: disk });
    try {
      const schedule = await engine.schedule("s", { workflow: Job, every: "1d" });
      await engine.idle();
      disk.failNextSync = true;
      const outcome = await schedule.trigger().then(
        () => "acknowledged",
        (e: unknown) => e,
      );
      expect(outcome).to.be.instanceOf(StorageError);
    } finally {
      await engine.shutdown().catch(() => undefined);
    }
  });

  it("stops the engine when deleting a schedule fails to sync: later starts reject with the StorageError", async () => {
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    const clock = new VirtualClock(Date.UTC(2030, 0, 1));
    const engine = await Engine.open(Config.local("/data").shards(4).clock(clock), { workflows: [Job], fileLayer: disk });
    try {
      const schedule = await engine.schedule("s1", { workflow: Job, every: "1d" });
      await engine.idle();
      // The sync that fails is that of a log segment (the one the drop of the schedule's streams writes to).
      disk.failNextSyncOf = (file) => /\d{12}\.log$/.test(file);
      const deleted = await schedule.delete().then(
        () => "acknowledged",
        (e: unknown) => e,
      );
      expect(deleted).to.be.instanceOf(StorageError);
      // Runs of every shard, that of the schedule or another: the engine acknowledges nothing more.
      for (const id of ["a", "b", "c", "d", "e", "f"]) {
        const started = await engine.start(Job, id, undefined).then(
          () => "acknowledged",
          (e: unknown) => e,
        );
        expect(started, `the start of ${id}`).to.be.instanceOf(StorageError);
      }
    } finally {
      await engine.shutdown().catch(() => undefined);
    }
  });

  it("starts no instant's run beside a run of the schedule it could not terminate (terminate-other)", async () => {
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    const shards = 4;
    const clock = new VirtualClock(Date.UTC(2030, 0, 1));
    const engine = await Engine.open(Config.local("/data").shards(shards).clock(clock), { workflows: [Job], fileLayer: disk });
    let image: MemoryFileLayer;
    try {
      const schedule = await engine.schedule("s", { workflow: Job, every: "1d", overlap: "terminate-other" });
      await schedule.trigger();
      await engine.idle();
      const [first] = (await schedule.describe()).running;
      expect(first).to.be.a("string");
      const firstShard = shardOf(first as string, shards);
      // A trigger at an instant whose run lands on another shard than the run it must end.
      while (shardOf(scheduleRunId("s", clock.now()), shards) === firstShard) await clock.advance(1);
      // The sync that fails is that of the shard of the run to terminate, so the new run's shard still writes.
      disk.failNextSyncOf = (file) => file.includes(`/shard-${String(firstShard).padStart(4, "0")}/`);
      const outcome = await schedule.trigger().then(
        () => "acknowledged",
        (e: unknown) => e,
      );
      expect(outcome).to.be.instanceOf(StorageError);
      image = disk.crashImage(new Random(1), () => "old");
    } finally {
      await engine.shutdown().catch(() => undefined);
    }
    const again = await Engine.open(Config.local("/data").shards(shards).clock(clock), { workflows: [Job], fileLayer: image });
    try {
      await again.idle();
      const running = (await again.list()).filter((r) => r.status === "running" || r.status === "suspended");
      expect(running.map((r) => r.id)).to.have.length(1);
    } finally {
      await again.shutdown();
    }
  });
});
