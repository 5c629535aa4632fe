import "reflect-metadata";
import { expect } from "chai";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { MemoryFileLayer, Random } from "../storage/support/memory-file-layer.js";

/** Child runs by the run ID each was started with. */
const childRuns: string[] = [];

@Workflow()
class Label {
  constructor(private readonly ctx: Ctx) {}

  async run(parcel: string): Promise<string> {
    childRuns.push(`${this.ctx.workflowId}#${this.ctx.runId()}`);
    return this.ctx.step("print", async () => `label for ${parcel}`);
  }
}

@Workflow()
class Parcel {
  constructor(private readonly ctx: Ctx) {}

  async run(parcel: string): Promise<string> {
    const label = await this.ctx.executeChild<string>(Label, `label-${parcel}`, parcel);
    await this.ctx.step("ship", async () => true);
    return `shipped with ${label}`;
  }
}

const open = (disk: MemoryFileLayer): Promise<Engine> =>
  Engine.open(Config.local("/data").shards(2).segmentBytes(64 * 1024), { workflows: [Parcel, Label], fileLayer: disk });

/** Runs the parcel workflow on a fresh disk, taking the crash image at file operation `crashAt`. */
async function imageAt(crashAt: number, rng: Random): Promise<{ image: MemoryFileLayer | undefined; ops: number }> {
  const disk = new MemoryFileLayer();
  disk.mkdirDurable("/data");
  const engine = await open(disk);
  const base = disk.ops;
  let image: MemoryFileLayer | undefined;
  disk.onOp = (n) => {
    if (n === base + crashAt) image = disk.crashImage(rng);
  };
  await (await engine.start(Parcel, "p-1", "p-1")).result();
  disk.onOp = undefined;
  const ops = disk.ops - base;
  await engine.shutdown();
  return { image, ops };
}

describe("a parent that starts a child, crashed at every point", function () {
  this.timeout(60_000);

  it("finishes after the restart with exactly one run of its child, never failing on the child's ID", async () => {
    const { ops } = await imageAt(-1, new Random(1));
    expect(ops).to.be.greaterThan(5);
    let childBeforeItsRecord = 0;
    for (let crashAt = 1; crashAt <= ops; crashAt++) {
      const rng = new Random(crashAt);
      const { image } = await imageAt(crashAt, rng);
      if (image === undefined) continue;
      childRuns.length = 0;
      const engine = await open(image);
      try {
        const parent = await engine.status("p-1");
        if (parent === undefined) continue;
        const recorded = (await engine.describe("p-1"))!.journal.some((r) => r.kind === "child");
        if (!recorded && (await engine.status("label-p-1")) !== undefined) childBeforeItsRecord++;
        expect(await engine.run("p-1").result(), `crash at operation ${crashAt}`).to.equal("shipped with label for p-1");
        expect((await engine.status("label-p-1"))?.runId, `crash at operation ${crashAt}: one run of the child`).to.equal(1);
        const journal = (await engine.describe("p-1"))!.journal.map((r) => r.kind);
        expect(journal.filter((k) => k === "child-result"), `crash at operation ${crashAt}: ${journal.join(", ")}`).to.have.length(1);
      } finally {
        await engine.shutdown();
      }
    }
    expect(childBeforeItsRecord, "crash points between the child's start and the parent's record of it").to.be.greaterThan(0);
  });
});
