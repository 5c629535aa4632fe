import v8 from "node:v8";
import vm from "node:vm";
import { expect } from "chai";
import { StreamIndex, position } from "../../src/storage/stream-index.js";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

function heap(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

describe(StreamIndex.name, () => {
  it("returns a stream's positions in order and forgets them on drop", () => {
    const index = new StreamIndex();
    index.add("a", position(1, 0));
    index.add("b", position(1, 40));
    index.add("a", position(2, 8));
    expect(index.positions("a")).to.deep.equal([position(1, 0), position(2, 8)]);
    expect(index.liveEntries).to.equal(3);
    expect(index.drop("a")).to.equal(2);
    expect(index.positions("a")).to.deep.equal([]);
    expect(index.keys()).to.deep.equal(["b"]);
    index.add("a", position(3, 0));
    expect(index.positions("a")).to.deep.equal([position(3, 0)]);
    expect(index.liveEntries).to.equal(2);
  });

  it("treats entries before a stream's last drop as dead", () => {
    const index = new StreamIndex();
    index.add("a", position(1, 0));
    index.drop("a");
    index.add("a", position(1, 100));
    expect(index.isLive("a", position(1, 0))).to.equal(false);
    expect(index.isLive("a", position(1, 100))).to.equal(true);
    expect(index.isLive("unknown", position(1, 0))).to.equal(false);
  });

  it("moves entries to new positions and skips those no longer live", () => {
    const index = new StreamIndex();
    for (let i = 0; i < 5; i++) index.add("a", position(1, i * 10));
    index.add("b", position(1, 50));
    const relocate = index.relocator();
    expect(relocate("a", position(1, 10), position(1, 0))).to.equal(true);
    expect(relocate("a", position(1, 30), position(1, 5))).to.equal(true);
    expect(relocate("a", position(1, 35), position(1, 6))).to.equal(false);
    expect(relocate("c", position(1, 0), position(1, 0))).to.equal(false);
    expect(index.positions("a")).to.deep.equal([0, 0, 20, 5, 40].map((o) => position(1, o)));
  });

  it("costs well under 200 bytes per stream of three entries, key included", () => {
    const streams = 100_000;
    const keyLength = 36;
    const keys = Buffer.alloc(streams * keyLength);
    for (let i = 0; i < streams; i++) keys.write(`run-${i.toString(16).padStart(32, "0")}`, i * keyLength, "latin1");
    const before = heap();
    const index = new StreamIndex();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < streams; i++) {
        index.add(keys.toString("latin1", i * keyLength, (i + 1) * keyLength), position(7 + round, i * 64));
      }
    }
    const perStream = (heap() - before) / streams;
    expect(index.liveEntries).to.equal(3 * streams);
    // The lower bound guards the measurement itself: a 36-character key alone takes more.
    expect(perStream).to.be.within(40, 160);
  });
});
