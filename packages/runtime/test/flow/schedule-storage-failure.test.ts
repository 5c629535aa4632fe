import "reflect-metadata";
import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { MemoryFileLayer } from "../storage/support/memory-file-layer.js";

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
    // The sync that fails is that of a log segment (the one the drop of the schedule's streams writes to).
    const paths = new Map<number, string>();
    const open = disk.open.bind(disk);
    disk.open = (file, mode, perm, dsync) => {
      const fd = open(file, mode, perm, dsync);
      paths.set(fd, file);
      return fd;
    };
    let failSegmentSync = false;
    const sync = disk.sync.bind(disk);
    disk.sync = (fd) => {
      if (failSegmentSync && /\d{12}\.log$/.test(paths.get(fd) ?? "")) {
        failSegmentSync = false;
        disk.failNextSync = true;
      }
      sync(fd);
    };
    const clock = new VirtualClock(Date.UTC(2030, 0, 1));
    const engine = await Engine.open(Config.local("/data").shards(4).clock(clock), { workflows: [Job], fileLayer: disk });
    try {
      const schedule = await engine.schedule("s1", { workflow: Job, every: "1d" });
      await engine.idle();
      failSegmentSync = true;
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
});
