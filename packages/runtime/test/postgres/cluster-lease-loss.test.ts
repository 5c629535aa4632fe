import "reflect-metadata";
import { expect } from "chai";
import pg from "pg";
import { ShardMovedError } from "../../src/core/errors.js";
import { Config, Ctx, Engine, Workflow } from "../../src/index.js";
import { PG_URL, useSchemas } from "./support/database.js";
import { uniqueOwner } from "./support/faults.js";
import { eventually } from "../support/wait.js";

const attempts: { started: number; aborted: unknown[] } = { started: 0, aborted: [] };

/** One step that runs until its signal aborts it, then fails with the abort's reason. */
@Workflow("lease-loss-long")
class Long {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<void> {
    await this.ctx.step("long", () => {
      attempts.started++;
      const signal = this.ctx.abortSignal;
      return new Promise<void>((_, reject) =>
        signal.addEventListener("abort", () => {
          attempts.aborted.push(signal.reason);
          reject(signal.reason as Error);
        }),
      );
    });
  }
}

describe("A cluster engine whose shard lease runs out", () => {
  const schema = useSchemas();
  let engine: Engine | undefined;
  let blocker: pg.Client | undefined;
  afterEach(async () => {
    await blocker?.query("ROLLBACK").catch(() => undefined);
    await blocker?.end().catch(() => undefined);
    await engine?.shutdown();
    engine = blocker = undefined;
    attempts.started = 0;
    attempts.aborted = [];
  });

  it("aborts the running steps of the shard with ShardMovedError, and runs them again once it holds the shard anew", async () => {
    const name = schema();
    const owner = uniqueOwner("loss");
    engine = await Engine.open(Config.postgres(PG_URL, { schema: name, owner, leaseMs: 900, cluster: true }).shards(2), {
      workflows: [Long],
    });
    await engine.start(Long, "long-1", undefined);
    await eventually("the step to run", () => attempts.started === 1);

    // The renewal's heartbeat waits for this lock, so no renewal gets through and the leases run out.
    blocker = new pg.Client({ connectionString: PG_URL });
    await blocker.connect();
    await blocker.query("BEGIN");
    await blocker.query(`SELECT 1 FROM "${name}".owners WHERE owner = $1 FOR UPDATE`, [owner]);
    await eventually("the running step to be aborted", () => attempts.aborted.length === 1, 3_000);
    expect(attempts.aborted[0]).to.be.instanceOf(ShardMovedError);
    expect(engine.holdsRun("long-1"), "the run's shard is no longer this process's").to.equal(false);

    await blocker.query("ROLLBACK");
    await eventually("the step to run again under a new lease", () => attempts.started === 2, 5_000);
    expect(engine.holdsRun("long-1")).to.equal(true);
  });
});
