import "reflect-metadata";
import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { MemoryFileLayer } from "../storage/support/memory-file-layer.js";

@Workflow("awaits-go")
class AwaitsGo {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    await this.ctx.waitFor("go");
    return "went";
  }
}

describe("a start that uses the ID's existing run", () => {
  it("is not acknowledged while that run's start is not durable, and fails with it when its sync fails", async () => {
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    const engine = await Engine.open(Config.local("/data").shards(1), { workflows: [AwaitsGo], fileLayer: disk });
    try {
      disk.failNextSync = true;
      // The first start's record is on its way to the log when the second start looks; its sync fails.
      const first = engine.start(AwaitsGo, "ue-1", undefined).then(
        () => "acknowledged",
        (e: unknown) => e,
      );
      const second = await engine.start(AwaitsGo, "ue-1", undefined, { idPolicy: { running: "use-existing" } }).then(
        () => "acknowledged",
        (e: unknown) => e,
      );
      expect(await first).to.be.instanceOf(StorageError);
      expect(second, "the run the second start would use never became durable").to.be.instanceOf(StorageError);
    } finally {
      await engine.shutdown().catch(() => undefined);
    }
  });
});
