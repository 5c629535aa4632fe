import "reflect-metadata";
import { expect } from "chai";
import pg from "pg";
import { Config, Ctx, Engine, FuseeError, Update, Workflow } from "../../src/index.js";
import { PG_URL, useSchemas } from "./support/database.js";
import { uniqueOwner } from "./support/faults.js";
import { eventually, sleep } from "../support/wait.js";

/** Waits for ever, counting the updates it applies. */
@Workflow("lease-lost-mid-update")
class Counter {
  private count = 0;
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<void> {
    await this.ctx.waitFor("never");
  }

  @Update() bump(): number {
    return ++this.count;
  }
}

const LEASE_MS = 600;

describe("A cluster engine that loses its shard while an update to one of its runs is being journaled", () => {
  const schema = useSchemas();
  let engine: Engine | undefined;
  let blocker: pg.Client | undefined;
  const escaped: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void escaped.push(reason);
  beforeEach(() => process.on("unhandledRejection", onUnhandled));
  afterEach(async () => {
    process.off("unhandledRejection", onUnhandled);
    escaped.length = 0;
    await blocker?.query("ROLLBACK").catch(() => undefined);
    await blocker?.end().catch(() => undefined);
    await engine?.shutdown();
    engine = blocker = undefined;
  });

  it("answers the update or refuses it with a FuseeError, and lets no rejection escape the process", async () => {
    const name = schema();
    engine = await Engine.open(
      Config.postgres(PG_URL, { schema: name, owner: uniqueOwner("mid-update"), leaseMs: LEASE_MS, cluster: true }).shards(1),
      { workflows: [Counter] },
    );
    await engine.start(Counter, "counter-1", undefined);
    expect(await engine.run("counter-1").update("bump")).to.equal(1);

    // The update's insert waits for this lock on the shard's lease row, and so does every renewal:
    // the lease runs out on the process's clock while the update is in flight.
    blocker = new pg.Client({ connectionString: PG_URL });
    await blocker.connect();
    await blocker.query("BEGIN");
    await blocker.query(`SELECT 1 FROM "${name}".leases WHERE shard = 0 FOR UPDATE`);
    const outcome = engine
      .run("counter-1")
      .update("bump")
      .then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
    await eventually("the shard to be given up", () => engine?.holdsRun("counter-1") === false, 5_000);
    await sleep(50);
    await blocker.query("ROLLBACK");

    // Whether the insert got in before the lease ran out on the database clock decides which.
    const settled = await outcome;
    if ("error" in settled) expect(settled.error, "the update's refusal").to.be.instanceOf(FuseeError);
    else expect(settled.value, "the update's answer: applied once").to.equal(2);
    await sleep(50);
    expect(escaped.map(String), "rejections no one handled").to.deep.equal([]);
  });
});
