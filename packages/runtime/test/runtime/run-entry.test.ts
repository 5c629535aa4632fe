import v8 from "node:v8";
import vm from "node:vm";
import { expect } from "chai";
import { RunEntry } from "../../src/engine/run-entry.js";
import { parseStream, streamOf } from "../../src/journal/stream-names.js";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

function heap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe("run index entries", () => {
  it("read back the workflow ID and run of every stream name they write", () => {
    for (const id of ["order-1", "a#b", "#", "größe 👋", "x".repeat(1000)]) {
      for (const runId of [1, 2, 10, 123_456_789_012_345]) {
        expect(parseStream(streamOf(id, runId))).to.deep.equal({ id, runId });
      }
    }
  });

  it("take no other stream for a run's", () => {
    for (const stream of [
      "order-1",
      "order-1#",
      "order-1#0",
      "order-1#01",
      "order-1# 1",
      "order-1#1e3",
      "order-1#-1",
      "order-1#1.5",
      "o#1234567890123456",
      "$schedule/s/1",
    ]) {
      expect(parseStream(stream), stream).to.equal(undefined);
    }
  });

  it("keep attributes, parent, children and extra timers until the next run of the ID starts", () => {
    const entry = new RunEntry("order-1", 0);
    entry.reset("order", 1, 100);
    expect([entry.attributes, entry.parent, entry.children]).to.deep.equal([undefined, undefined, undefined]);
    entry.attributes = { region: "eu" };
    entry.parent = { id: "batch-7", runId: 2, seq: 4 };
    (entry.children ??= new Map()).set("line-1", { seq: 3, runId: 1, close: "terminate" });
    entry.setTimer(5);
    entry.setTimer(6);
    expect(entry.attributes).to.deep.equal({ region: "eu" });
    expect(entry.parent).to.deep.equal({ id: "batch-7", runId: 2, seq: 4 });
    expect([...entry.children!.keys()]).to.deep.equal(["line-1"]);
    expect([entry.hasTimer(5), entry.hasTimer(6)]).to.deep.equal([true, true]);
    entry.clearTimer(6);
    expect([entry.hasTimer(5), entry.hasTimer(6), entry.attributes]).to.deep.equal([true, false, { region: "eu" }]);

    entry.reset("order", 2, 200);
    expect([entry.attributes, entry.parent, entry.children, entry.hasTimer(5), entry.stream]).to.deep.equal([
      undefined,
      undefined,
      undefined,
      false,
      "order-1#2",
    ]);
  });

  it("give back the start time, shard and finish of the current run exactly", () => {
    for (const shard of [0, 1, 1023]) {
      const entry = new RunEntry("order-1", shard);
      for (const startedAt of [0, 1, 32_767, 32_768, 1_780_000_000_123, 2 ** 53 - 1, -5, -32_769, 12.5, 1_780_000_000_123.25]) {
        entry.reset("order", entry.runId + 1, startedAt);
        expect([entry.startedAt, entry.shard, entry.finished, entry.endedAt, entry.finishAppended], String(startedAt)).to.deep.equal([
          startedAt,
          shard,
          undefined,
          undefined,
          false,
        ]);
        entry.setTimer(3);
        entry.finishing();
        expect([entry.finishAppended, entry.finished, entry.hasTimer(3)]).to.deep.equal([true, undefined, true]);
        entry.finish("cancelled", startedAt + 7);
        entry.setTimer(4);
        expect([entry.startedAt, entry.shard, entry.finished, entry.endedAt, entry.hasTimer(3), entry.hasTimer(4)]).to.deep.equal([
          startedAt,
          shard,
          "cancelled",
          startedAt + 7,
          false,
          false,
        ]);
      }
      for (const status of ["ok", "failed", "cancelled", "terminated"] as const) {
        entry.reset("order", entry.runId + 1, 1_000);
        entry.finish(status, 2_000);
        expect([entry.finished, entry.endedAt]).to.deep.equal([status, 2_000]);
      }
    }
  });

  it("cost no more once some run has finished, with a timer pending or not", () => {
    const entries: RunEntry[] = [];
    const before = heap();
    // Enough entries that what the rest of the process allocates meanwhile is well under a byte each.
    for (let i = 0; i < 400_000; i++) {
      const entry = new RunEntry(`run-${i}`, i % 4);
      entry.reset("order", 1, 1_780_000_000_123 + i);
      entry.setTimer(2);
      entries.push(entry);
    }
    const parked = (heap() - before) / entries.length;
    entries[7]!.finish("ok", 1_780_000_009_999);
    for (const entry of entries) entry.clearTimer(2);
    for (const entry of entries) entry.setTimer(3);
    const afterOneFinished = (heap() - before) / entries.length;
    expect(entries[7]!.endedAt).to.equal(1_780_000_009_999);
    expect(afterOneFinished - parked, `${parked} bytes per entry, then ${afterOneFinished}`).to.be.below(2);
  });
});
