import "reflect-metadata";
import { expect } from "chai";
import { Batch, Config, ConfigError, Ctx, Debounce, Engine, Workflow } from "../../src/index.js";
import { shardOf } from "../../src/core/ids.js";
import { PG_URL, useSchemas } from "./support/database.js";

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
      return `kid said ${await this.ctx.executeChild<number>(Kid, kidId, 21)}`;
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

  it("holds every shard, runs children in their parent's shard and refuses them in another, naming both", async () => {
    engine = await Engine.open(Config.postgres(PG_URL, { schema: schema(), leaseMs: 1_000, cluster: true }).shards(SHARDS), {
      workflows: [Parent, Kid],
    });
    const parentShard = shardOf("parent-1", SHARDS);
    const near = idIn(parentShard, true, "kid");
    expect(await (await engine.start(Parent, "parent-1", near)).result()).to.equal("kid said 42");
    const refused = await (await engine.start(Parent, "parent-2", idIn(shardOf("parent-2", SHARDS), false, "far"))).result();
    expect(refused).to.match(/^refused: child workflow ID 'far-\d+' falls in shard \d, but its parent 'parent-2' is in shard \d/);
  });

  it("refuses schedules, debounced starts and batched events with a ConfigError", async () => {
    engine = await Engine.open(Config.postgres(PG_URL, { schema: schema(), leaseMs: 1_000, cluster: true }).shards(SHARDS), {
      workflows: [Kid],
    });
    const err = await engine.schedule("nightly", { workflow: Kid, every: "1h" } as never).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message).to.contain("schedules are not available to an engine in cluster mode");
    const err2 = await engine.debounce(Kid, "k", 1, Debounce.of("100ms")).catch((e: unknown) => e);
    expect(err2).to.be.instanceOf(ConfigError);
    const err3 = await engine.batch(Kid, "k", 1, Batch.of(10, "1s")).catch((e: unknown) => e);
    expect(err3).to.be.instanceOf(ConfigError);
  });
});
