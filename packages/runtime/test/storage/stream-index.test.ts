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

  it("agrees with a plain list per stream through many adds, drops and moves", () => {
    const index = new StreamIndex();
    const model = new Map<string, number[]>();
    let seed = 11;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    let offset = 0;
    for (let step = 0; step < 4_000; step++) {
      const key = `s-${next(30)}`;
      const roll = next(20);
      if (roll < 14) {
        offset += 1 + next(50);
        index.add(key, position(1, offset));
        model.set(key, [...(model.get(key) ?? []), position(1, offset)]);
      } else if (roll < 16) {
        expect(index.drop(key)).to.equal(model.get(key)?.length ?? 0);
        model.delete(key);
      } else if (roll < 17) {
        // Compaction moves every live entry, in log order, to lower positions.
        const relocate = index.relocator();
        const all = [...model].flatMap(([k, ps]) => ps.map((p, i) => ({ k, p, i }))).sort((a, b) => a.p - b.p);
        for (const { k, p, i } of all) {
          expect(relocate(k, p, p - 1)).to.equal(true);
          model.get(k)![i] = p - 1;
        }
        expect(relocate("s-none", 0, 0)).to.equal(false);
      }
      const expected = model.get(key) ?? [];
      expect(index.positions(key)).to.deep.equal(expected);
      expect(index.count(key)).to.equal(expected.length);
      if (expected.length > 0) expect(index.isLive(key, expected[0]! - 1)).to.equal(false);
    }
    expect(index.liveEntries).to.equal([...model.values()].reduce((n, ps) => n + ps.length, 0));
    expect(index.keys().sort()).to.deep.equal([...model.keys()].sort());
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
