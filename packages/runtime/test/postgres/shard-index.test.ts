import { expect } from "chai";
import { ShardIndex } from "../../src/storage/postgres/shard-index.js";

/** A row of one-byte bodies for the given keys. */
const row = (index: ShardIndex, seq: number, streams: string[], dead?: number[]): void =>
  index.addRow(
    seq,
    streams.length,
    streams,
    streams.map((_, i) => i + 1),
    dead === undefined ? undefined : new Set(dead),
  );

describe("ShardIndex", () => {
  it("locates a stream's entries by row and 1-based position, across rows", () => {
    const index = new ShardIndex();
    row(index, 1, ["a", "b", "a"]);
    row(index, 4, ["b", "a"]);
    expect(index.locate("a")).to.deep.equal({ rows: [1, 1, 4], positions: [1, 3, 2] });
    expect(index.locate("b")).to.deep.equal({ rows: [1, 4], positions: [2, 1] });
    expect(index.locate("c")).to.deep.equal({ rows: [], positions: [] });
    expect(index.keys()).to.deep.equal(["a", "b"]);
    expect(index.liveEntries).to.equal(5);
    expect(index.bytes).to.equal(10);
  });

  it("leaves out entries a row was stored with as dead, and a row with none live", () => {
    const index = new ShardIndex();
    row(index, 1, ["a", "b"], [1]);
    row(index, 3, ["a"], [1]);
    row(index, 4, ["c"]);
    expect(index.locate("a").rows).to.deep.equal([]);
    expect(index.locate("c")).to.deep.equal({ rows: [4], positions: [1] });
    expect(index.keys()).to.deep.equal(["b", "c"]);
    expect(index.partlyDead()).to.deep.equal([{ seq: 1, entries: 2, live: 1 }]);
  });

  it("plans a drop as rows to delete and positions to mark, and changes nothing until applied", () => {
    const index = new ShardIndex();
    row(index, 1, ["a", "b", "a"]);
    row(index, 4, ["a", "a"]);
    const plan = index.planDrop(["a", "a"]);
    expect(plan).to.deep.equal({ gone: [4], markRows: [1, 1], markPositions: [1, 3] });
    expect(index.liveEntries).to.equal(5);
    index.applyDrop(["a"]);
    expect(index.liveEntries).to.equal(1);
    expect(index.keys()).to.deep.equal(["b"]);
    expect(index.takeFreed(), "the deleted row's bytes").to.equal(2);
    expect(index.takeFreed()).to.equal(0);
    expect(index.partlyDead()).to.deep.equal([{ seq: 1, entries: 3, live: 1 }]);
  });

  it("still finds every live entry after deleted rows are pruned away", () => {
    const index = new ShardIndex();
    for (let i = 0; i < 200; i++) row(index, i * 2 + 1, [`gone-${i}`, i % 4 === 0 ? "kept" : `gone-${i}`]);
    index.applyDrop(Array.from({ length: 200 }, (_, i) => `gone-${i}`));
    const { rows, positions } = index.locate("kept");
    expect(rows).to.deep.equal(Array.from({ length: 50 }, (_, i) => i * 8 + 1));
    expect(positions).to.deep.equal(Array.from({ length: 50 }, () => 2));
    expect(index.planDrop(["kept"])).to.deep.equal({ gone: rows, markRows: [], markPositions: [] });
    expect(index.partlyDead()).to.have.length(50);
  });

  it("counts the bytes a rewrite freed, unless a drop already deleted the row", () => {
    const index = new ShardIndex();
    index.addRow(1, 2, ["a", "b"], [10, 30], undefined);
    index.addRow(3, 2, ["a", "b"], [10, 30], undefined);
    index.applyDrop(["b"]);
    index.rewritten(1, 10);
    expect(index.takeFreed()).to.equal(20);
    index.applyDrop(["a"]);
    expect(index.takeFreed(), "both rows, at their sizes when deleted").to.equal(10 + 30);
    index.rewritten(3, 10);
    expect(index.takeFreed()).to.equal(0);
  });
});
