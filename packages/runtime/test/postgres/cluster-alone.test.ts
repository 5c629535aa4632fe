import "reflect-metadata";
import { expect } from "chai";
import { Batch, Config, Ctx, Debounce, Engine, Workflow } from "../../src/index.js";
import { shardOf } from "../../src/core/ids.js";
import { PG_URL, useSchemas } from "./support/database.js";
import { eventually } from "../support/wait.js";

const SHARDS = 4;

@Workflow("cluster-kid")
class Kid {
  async run(n: number): Promise<number> {
    return n * 2;
  }
}

@Workflow("cluster-parent")
class Parent {
  constructor(private readonly ctx: Ctx) {}

  async run(kidId: string): Promise<string> {
    try {
      return `kid said ${await this.ctx.executeChild(Kid, kidId, 21)}`;
    } catch (e) {
      return `refused: ${(e as Error).message}`;
    }
  }
}

/** An ID in the given shard (`same`) or in another one. */
function idIn(shard: number, same: boolean, prefix: string): string {
  for (let i = 0; ; i++) {
    const id = `${prefix}-${i}`;
    if ((shardOf(id, SHARDS) === shard) === same) return id;
  }
}

describe("An engine in cluster mode on its own", () => {
  const schema = useSchemas();
  let engine: Engine | undefined;
  afterEach(async () => {
    await engine?.shutdown();
    engine = undefined;
  });

  it("holds every shard and runs children in their parent's shard and in any other", async () => {
    engine = await Engine.open(Config.postgres(PG_URL, { schema: schema(), leaseMs: 1_000, cluster: true }).shards(SHARDS), {
      workflows: [Parent, Kid],
    });
    expect(
      ["parent-1", "kid-0", "far-3"].every((id) => engine!.holdsRun(id)),
      "a cluster of one holds every run",
    ).to.equal(true);
    const near = idIn(shardOf("parent-1", SHARDS), true, "kid");
    expect(await (await engine.start(Parent, "parent-1", near)).result()).to.equal("kid said 42");
    const far = idIn(shardOf("parent-2", SHARDS), false, "far");
    expect(await (await engine.start(Parent, "parent-2", far)).result()).to.equal("kid said 42");
  });

  it("runs schedules, debounced starts and batched events", async () => {
    engine = await Engine.open(Config.postgres(PG_URL, { schema: schema(), leaseMs: 1_000, cluster: true }).shards(SHARDS), {
      workflows: [Kid],
    });
    const schedule = await engine.schedule("often", { workflow: Kid, every: "100ms", input: 1 });
    await eventually("two runs of the schedule", async () => (await schedule.describe()).started >= 2);
    await schedule.delete();
    const debounced = await engine.debounce(Kid, "k", 4, Debounce.of("50ms"));
    expect(await debounced.result()).to.equal(8);
    const batched = await engine.batch(Kid, "k", 5, Batch.of(1, "1s"));
    expect(batched.id).to.match(/^k#/);
  });
});
