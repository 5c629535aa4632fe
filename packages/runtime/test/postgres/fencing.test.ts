import { expect } from "chai";
import { openPostgresLog, type PostgresLog } from "../../src/storage/postgres/pg-log.js";
import { type Child, killHard } from "../storage/support/child.js";
import { PG_URL, useSchemas } from "./support/database.js";
import { startLeaseHolder } from "./support/lease-holder.js";
import { eventually } from "../support/wait.js";

const LEASE_MS = 1_000;

async function storedBodies(log: PostgresLog): Promise<string[]> {
  const out: string[] = [];
  for (const shard of [0, 1]) for await (const e of log.scan(shard)) out.push(Buffer.from(e.body).toString());
  return out;
}

describe("PostgreSQL fencing of a paused process (real processes)", () => {
  const schema = useSchemas();
  let child: Child | undefined;
  let survivor: PostgresLog | undefined;
  afterEach(async () => {
    if (child !== undefined) {
      child.process.kill("SIGCONT");
      await killHard(child);
    }
    await survivor?.close();
    child = survivor = undefined;
  });

  it("accepts none of the writes of a process paused past its lease, which then stands down", async () => {
    const name = schema();
    const holder = startLeaseHolder(name, LEASE_MS);
    child = holder.child;
    await holder.untilAcked(50);

    child.process.kill("SIGSTOP");
    survivor = await openPostgresLog({ url: PG_URL, schema: name, owner: "survivor", leaseMs: LEASE_MS });
    const taken = new Set<number>();
    survivor.onAcquired((shard) => taken.add(shard));
    await eventually("every shard taken over", () => taken.size === 2, LEASE_MS * 5);
    const before = await storedBodies(survivor);
    const ackedBeforePause = holder.acked();
    expect(
      ackedBeforePause.filter((n) => !before.includes(n)),
      "acknowledged appends kept",
    ).to.deep.equal([]);

    child.process.kill("SIGCONT");
    const { code, stderr } = await child.exited;
    child = undefined;
    expect(code, "the paused process stands down").to.not.equal(0);
    expect(stderr, "it learns the shard moved").to.contain("ShardMovedError");

    const after = await storedBodies(survivor);
    expect(
      after.filter((b) => !before.includes(b)),
      "writes accepted from the paused process",
    ).to.deep.equal([]);
    const ackedAfter = holder.acked();
    expect(
      ackedAfter.filter((n) => !before.includes(n)),
      "appends acknowledged to the paused process",
    ).to.deep.equal([]);
    await survivor.append(0, { stream: "after", body: new Uint8Array([1]) });
  });
});
