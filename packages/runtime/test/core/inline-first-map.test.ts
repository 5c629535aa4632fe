import { expect } from "chai";
import { InlineFirstMap } from "../../src/core/inline-first-map.js";

describe("InlineFirstMap", () => {
  it("behaves as a Map under a random mix of sets, takes and reads", () => {
    const ours = new InlineFirstMap<string>();
    const model = new Map<number, string>();
    let seed = 99;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let i = 0; i < 20_000; i++) {
      const key = next(6);
      switch (next(3)) {
        case 0:
          ours.set(key, `v${i}`);
          model.set(key, `v${i}`);
          break;
        case 1: {
          const expected = model.get(key);
          model.delete(key);
          expect(ours.take(key)).to.equal(expected);
          break;
        }
        default:
          expect(ours.get(key)).to.equal(model.get(key));
          expect(ours.has(key)).to.equal(model.has(key));
      }
      expect(ours.size).to.equal(model.size);
    }
  });

  it("keeps an undefined value as a present key", () => {
    const map = new InlineFirstMap<undefined>();
    map.set(1, undefined);
    map.set(2, undefined);
    expect([map.has(1), map.has(2), map.size]).to.deep.equal([true, true, 2]);
    map.take(2);
    expect([map.has(2), map.size]).to.deep.equal([false, 1]);
  });
});
