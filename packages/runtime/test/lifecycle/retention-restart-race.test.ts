import "reflect-metadata";
import { expect } from "chai";
import { shardOf } from "../../src/core/ids.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { localKind, type EngineKind } from "../runtime/harness.js";

@Workflow("race-job")
class Job {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<number> {
    await this.ctx.sleep("1m");
    return n;
  }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const SHARDS = 4;

/** An ID whose runs live on `shard`. */
function idOn(shard: number, prefix: string): string {
  for (let i = 0; ; i++) if (shardOf(`${prefix}${i}`, SHARDS) === shard) return `${prefix}${i}`;
}

type Configure = NonNullable<Parameters<EngineKind["open"]>[1]>;

/**
 * Finishes one run on each shard, lets the sweep remove them, and starts the last shard's ID again
 * as soon as the index no longer has it, while the sweep still drops the other shards' journals.
 */
async function raceOnce(kind: EngineKind): Promise<void> {
  const clock = new VirtualClock(Date.UTC(2030, 0, 1));
  const configure: Configure = (c) => c.clock(clock).shards(SHARDS).retention("1h");
  let engine = await kind.open({ workflows: [Job] }, configure);
  const ids = [0, 1, 2, 3].map((s) => idOn(s, "job-"));
  for (const id of ids) await engine.start(Job, id, 1);
  await clock.advance("1m");
  for (const id of ids) expect((await engine.status(id))?.status, id).to.equal("ok");
  const last = ids[3] as string;
  const sweeping = clock.advance("2h");
  for (let i = 0; i < 100_000 && (await engine.status(last)) !== undefined; i++) await turn();
  expect(await engine.status(last), "the sweep removed the run").to.equal(undefined);
  await engine.start(Job, last, 2);
  await sweeping;
  expect((await engine.status(last))?.runId, "the new run").to.equal(1);
  await engine.shutdown();
  engine = await kind.reopen({ workflows: [Job] }, configure);
  try {
    const after = await engine.status(last);
    expect(after?.runId, "the new run after a restart").to.equal(1);
    // It may have ended while the clock went on (its sleep is a minute): then with its own result.
    if (after?.status !== "ok") await clock.advance("1m");
    expect(await engine.run(last).result()).to.equal(2);
  } finally {
    await engine.shutdown();
  }
}

for (const make of [localKind])
  describe(`a run started under an ID the retention sweep is removing (${make.name})`, () => {
    let kind: EngineKind;
    beforeEach(() => {
      kind = make();
    });
    afterEach(() => kind.cleanup());

    it("is kept, across a restart: the sweep drops only the journals of the runs it removed", async () => {
      // Where the new start lands in the sweep depends on the event loop: the race is run several times.
      for (let round = 0; round < 8; round++) {
        const k = round === 0 ? kind : make();
        try {
          await raceOnce(k);
        } finally {
          if (k !== kind) await k.cleanup();
        }
      }
    });

    it("keeps a run started under an ID after the sweep removed it, across a restart", async () => {
      const clock = new VirtualClock(Date.UTC(2030, 0, 1));
      const configure = (c: Parameters<NonNullable<Parameters<EngineKind["open"]>[1]>>[0]) => c.clock(clock).shards(SHARDS).retention("1h");
      let engine = await kind.open({ workflows: [Job] }, configure);
      const id = idOn(2, "job-");
      await engine.start(Job, id, 1);
      await clock.advance("1m");
      await clock.advance("2h");
      for (let i = 0; i < 50 && (await engine.status(id)) !== undefined; i++) {
        await clock.advance("1m");
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(await engine.status(id), "the sweep removed the run").to.equal(undefined);
      await engine.start(Job, id, 2);
      await engine.shutdown();
      engine = await kind.reopen({ workflows: [Job] }, configure);
      expect((await engine.status(id))?.runId, "the new run after a restart").to.equal(1);
      await clock.advance("1m");
      expect(await engine.run(id).result()).to.equal(2);
      await engine.shutdown();
    });
  });
