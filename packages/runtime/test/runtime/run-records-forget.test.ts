import { expect } from "chai";
import { ShardMovedError } from "../../src/core/errors.js";
import { RunEntry } from "../../src/engine/run-entry.js";
import { RunRecords, type RunRecordsDeps } from "../../src/engine/run-records.js";

/** Records whose log is never reached: these tests only append in name (positions not yet durable). */
function records(): RunRecords {
  const deps = { sink: { durable: () => undefined, failed: () => undefined } } as unknown as RunRecordsDeps;
  return new RunRecords(deps);
}

function pending(shard: number, id: string): RunEntry {
  const entry = new RunEntry(id, shard);
  entry.appended = 3;
  entry.durable = 1;
  return entry;
}

/** "pending" while the promise has not settled after the current turn's microtasks; else how it settled. */
async function state(p: Promise<void>): Promise<string> {
  const seen = p.then(
    () => "resolved",
    (e: unknown) => (e instanceof ShardMovedError ? "moved" : `rejected: ${String(e)}`),
  );
  return Promise.race([seen, new Promise<string>((resolve) => setImmediate(() => resolve("pending")))]);
}

describe("waiting for a run's appended records to be durable when its shard is forgotten", () => {
  const moved = (): ShardMovedError => new ShardMovedError("shard 0 is no longer held by this process");

  it("ends the waits begun before the shard was forgotten with the reason, and leaves other shards' waits", async () => {
    const r = records();
    const here = pending(0, "r1");
    const elsewhere = pending(1, "r2");
    const waitHere = r.settled(here);
    const waitElsewhere = r.settled(elsewhere);
    r.forget(0, [here], moved());
    expect(await state(waitHere)).to.equal("moved");
    expect(await state(waitElsewhere)).to.equal("pending");
  });

  it("ends at once a wait asked later through an entry of the forgotten shard, whose records can no longer become durable here", async () => {
    const r = records();
    const stale = pending(0, "r1");
    r.forget(0, [stale], moved());
    expect(await state(r.settled(stale))).to.equal("moved");
  });

  it("still settles waits on entries of the shard loaded again after it was forgotten", async () => {
    const r = records();
    r.forget(0, [pending(0, "r1")], moved());
    const fresh = new RunEntry("r1", 0);
    expect(await state(r.settled(fresh)), "nothing appended yet").to.equal("resolved");
  });
});
