import "reflect-metadata";
import { expect } from "chai";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { MemoryFileLayer } from "../storage/support/memory-file-layer.js";

@Workflow("sleeping-child")
class SleepingChild {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    await this.ctx.sleep("1h");
    return "slept";
  }
}

@Workflow("parent-starting-child")
class StartsChild {
  constructor(private readonly ctx: Ctx) {}
  async run(withChild: boolean): Promise<string> {
    if (withChild) await this.ctx.startChild(SleepingChild, `${this.ctx.workflowId}-child`, undefined, { close: "terminate" });
    return "started";
  }
}

describe("a child whose start races the end of its parent's run", () => {
  it("is closed by its policy when a new start replaces the parent's run meanwhile", async () => {
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    const clock = new VirtualClock(Date.UTC(2030, 0, 1), { runningStepGrace: 0 });
    const engine = await Engine.open(Config.local("/data").shards(2).cache(1).clock(clock), {
      workflows: [StartsChild, SleepingChild],
      fileLayer: disk,
    });
    try {
      await engine.start(StartsChild, "racing", false);
      await engine.idle();
      const [withChild] = await Promise.allSettled([
        engine.start(StartsChild, "racing", true),
        engine.start(StartsChild, "racing", false, { idPolicy: { running: "terminate-existing" } }),
      ]);
      expect(withChild.status).to.equal("fulfilled");
      await engine.idle();
      const child = await engine.status("racing-child");
      expect(child?.status ?? "never started", "the child of the run that was replaced").to.be.oneOf(["terminated", "never started"]);
    } finally {
      await engine.shutdown();
    }
  });
});
