import { expect } from "chai";
import { AlreadyExistsError } from "../../src/core/errors.js";
import { Batcher } from "../../src/engine/batches.js";
import type { FlowRuns } from "../../src/engine/flow-runs.js";
import { Batch } from "../../src/engine/flow-rules.js";
import type { SystemLog } from "../../src/engine/system-streams.js";
import type { SystemRecord } from "../../src/journal/system-records.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";

/**
 * Two holders of one shard, one after the other, on a shared log of batch records and shared runs:
 * `leased` says whether the first holder's lease on the shard still lasts on its clock.
 */
function twoHolders() {
  const records: { n: number; record: SystemRecord }[] = [];
  const started = new Map<string, unknown>();
  const runs = {
    start: async (_type: string, id: string, input: unknown) => {
      if (started.has(id)) throw new AlreadyExistsError(`run ${id} exists`);
      started.set(id, input);
    },
  } as unknown as FlowRuns;
  const state = { leased: true };
  const clock = new VirtualClock(Date.UTC(2030, 0, 1));
  const failed: unknown[] = [];
  const holder = (holds: () => boolean): Batcher => {
    const sys = {
      append: async (_family: string, _key: string, n: number, record: SystemRecord) => void records.push({ n, record }),
      drop: async () => undefined,
      shardOf: () => 0,
      holds,
    } as unknown as SystemLog;
    return new Batcher(sys, runs, clock, (e) => void failed.push(e));
  };
  const first = holder(() => state.leased);
  /** The shard's next holder, recovered from the records the log holds. */
  const next = (): Batcher => {
    const b = holder(() => true);
    for (const { n, record } of records) b.recover({ family: "batch", name: "k", n }, record);
    b.open();
    return b;
  };
  return { first, next, state, clock, started, failed };
}

describe("a batch whose holder's lease on its shard ran out on its clock", () => {
  it("starts no run when its timeout passes; the shard's next holder starts it once, with the events it took since", async () => {
    const h = twoHolders();
    const runId = await h.first.batch("w", "k", "a", Batch.of(10, "1s"), undefined);
    h.state.leased = false;
    const next = h.next();
    expect(await next.batch("w", "k", "b", Batch.of(10, "1s"), undefined), "one batch for both events").to.equal(runId);

    await h.clock.advance("1s");
    expect([...h.started], "the batch's run").to.deep.equal([[runId, ["a", "b"]]]);
    await h.clock.advance("2m");
    expect(h.started.size, "runs started").to.equal(1);
    expect(h.failed).to.deep.equal([]);
  });
});
