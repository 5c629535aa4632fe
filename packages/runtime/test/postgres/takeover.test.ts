import { expect } from "chai";
import { openPostgresLog, type PostgresLog } from "../../src/storage/postgres/pg-log.js";
import { type Child, killHard } from "../storage/support/child.js";
import { PG_URL, useSchemas } from "./support/database.js";
import { startLeaseHolder } from "./support/lease-holder.js";
import { eventually } from "../support/wait.js";

const LEASE_MS = 1_000;
/** The survivor looks every third of a lease, plus time for a few queries on a loaded machine. */
const MARGIN_MS = LEASE_MS / 3 + 1_000;

describe("PostgreSQL takeover after a crash", () => {
  const schema = useSchemas();
  let child: Child | undefined;
  let survivor: PostgresLog | undefined;
  afterEach(async () => {
    if (child !== undefined) await killHard(child);
    await survivor?.close();
    child = survivor = undefined;
  });

  it("lets a live process take the shards of one that was SIGKILLed within the lease time plus a margin", async () => {
    const name = schema();
    const holder = startLeaseHolder(name, LEASE_MS);
    child = holder.child;
    await holder.untilAcked(50);

    survivor = await openPostgresLog({ url: PG_URL, schema: name, owner: "survivor", leaseMs: LEASE_MS });
    expect(survivor.ownedShards(), "the holder is alive and holds everything").to.deep.equal([]);
    const taken = new Map<number, number>();
    survivor.onAcquired((shard) => taken.set(shard, Date.now()));

    const killedAt = Date.now();
    await killHard(child);
    await eventually("every shard taken over", () => taken.size === 2, LEASE_MS + MARGIN_MS + 2_000);
    const waited = Math.max(...taken.values()) - killedAt;
    expect(waited).to.be.at.most(LEASE_MS + MARGIN_MS);
    expect(survivor.ownedShards()).to.deep.equal([0, 1]);
    expect(survivor.epochOf(0)).to.equal(2);

    const acked = holder.acked();
    const stored = new Set<string>();
    for (const shard of [0, 1]) for await (const e of survivor.scan(shard)) stored.add(Buffer.from(e.body).toString());
    expect(
      acked.filter((n) => !stored.has(n)),
      "acknowledged appends missing after the crash",
    ).to.deep.equal([]);
    await survivor.append(0, { stream: "after", body: new Uint8Array([1]) });
  });
});
