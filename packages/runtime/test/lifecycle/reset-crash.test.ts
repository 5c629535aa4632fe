import "reflect-metadata";
import { expect } from "chai";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { DataDirReader } from "../../src/replay/data-dir-reader.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { MemoryFileLayer, Random } from "../storage/support/memory-file-layer.js";

const STEPS = 40;
/** Step names run by the code of the engine under test, in order. */
const ran: string[] = [];

@Workflow()
class Pipeline {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    let sum = 0;
    // Large outcomes: the copy of the journal spans more than one write of the log.
    for (let i = 0; i < STEPS; i++)
      sum += (
        await this.ctx.step(`s${i}`, async () => {
          ran.push(`s${i}`);
          return "x".repeat(4000);
        })
      ).length;
    return sum;
  }
}

const open = (disk: MemoryFileLayer, keepHistory: boolean): Promise<Engine> =>
  Engine.open(
    Config.local("/data")
      .shards(1)
      .segmentBytes(64 * 1024)
      .keepHistory(keepHistory),
    { workflows: [Pipeline], fileLayer: disk },
  );

describe("reset across a power loss", () => {
  for (const keepHistory of [false, true])
    it(`leaves either the old run or the whole new run: steps before the reset point never run again (history ${keepHistory ? "kept" : "dropped"})`, async function () {
      this.timeout(300_000);
      const resetTo = `s${STEPS - 2}`;
      let points = 0;
      for (let crashAt = 0; ; crashAt++) {
        const disk = new MemoryFileLayer();
        disk.mkdirDurable("/data");
        const engine = await open(disk, keepHistory);
        ran.length = 0;
        const run = await engine.start(Pipeline, "p", undefined);
        await run.result();
        const before = (await run.status()).runId;
        const base = disk.ops;
        let image: MemoryFileLayer | undefined;
        disk.onOp = (n) => {
          if (n === base + crashAt) image = disk.crashImage(new Random(crashAt));
        };
        await run.reset(resetTo);
        await run.result();
        disk.onOp = undefined;
        const ops = disk.ops - base;
        await engine.shutdown();
        if (crashAt > ops) break;
        if (image === undefined) continue;
        points++;
        const where = `power loss at operation ${crashAt} of ${ops}`;
        const reader = await DataDirReader.open("/data", { fileLayer: image });
        const read = reader.list().find((r) => r.id === "p")?.runId;
        await reader.close();
        const reopened = await open(image, keepHistory);
        try {
          ran.length = 0;
          const handle = reopened.run<number>("p");
          expect(await handle.result(), where).to.equal(STEPS * 4000);
          const { runId } = await handle.status();
          expect([before, before + 1], where).to.include(runId);
          expect(read, `${where}: the run a reader of the data directory finds`).to.equal(runId);
          const again = ran.filter((name) => Number(name.slice(1)) < STEPS - 2);
          expect(again, `${where}: steps before '${resetTo}' ran again in run ${runId}`).to.deep.equal([]);
          if (runId === before) {
            // The reset was never acknowledged: done again, it writes the same new run in full.
            await handle.reset(resetTo);
            expect(await handle.result(), where).to.equal(STEPS * 4000);
            expect((await handle.status()).runId, where).to.equal(before + 1);
            expect(ran, `${where}: the retried reset`).to.deep.equal([`s${STEPS - 2}`, `s${STEPS - 1}`]);
          }
        } finally {
          await reopened.shutdown();
        }
      }
      expect(points).to.be.greaterThan(1);
    });
});
