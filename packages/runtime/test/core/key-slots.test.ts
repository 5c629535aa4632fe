import { expect } from "chai";
import { KeySlots } from "../../src/core/key-slots.js";

describe(KeySlots.name, () => {
  it("finds every key it holds and none it does not, across growth and deletions", () => {
    const slots = new KeySlots<string>((key) => key);
    const model = new Map<string, number>();
    const taken = new Set<number>();
    // A fixed sequence of adds and deletes, with deletions frequent enough to reuse slots and to
    // fill the table with deletion marks between its rebuilds.
    let seed = 7;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let step = 0; step < 50_000; step++) {
      const key = `run-${next(5_000)}#${next(3) + 1}`;
      if (model.has(key) && next(2) === 0) {
        expect(slots.delete(key)).to.equal(model.get(key));
        taken.delete(model.get(key)!);
        model.delete(key);
      } else if (!model.has(key)) {
        const slot = slots.add(key);
        expect(taken.has(slot)).to.equal(false);
        taken.add(slot);
        model.set(key, slot);
      }
    }
    expect(slots.size).to.equal(model.size);
    for (const [key, slot] of model) {
      expect(slots.get(key)).to.equal(slot);
      expect(slots.at(slot)).to.equal(key);
    }
    expect(slots.get("run-5000#1")).to.equal(-1);
    expect(slots.delete("run-5000#1")).to.equal(-1);
    expect([...slots.each()].sort()).to.deep.equal([...model.keys()].sort());
    expect(slots.slotLimit).to.be.at.most(model.size * 2);
  });

  it("finds a value by the key it carries and replaces it in its slot", () => {
    const slots = new KeySlots<{ id: string; n: number }>((value) => value.id);
    const slot = slots.add({ id: "a", n: 1 });
    slots.replace(slot, { id: "a", n: 2 });
    expect(slots.get("a")).to.equal(slot);
    expect(slots.at(slot)).to.deep.equal({ id: "a", n: 2 });
    expect(slots.size).to.equal(1);
  });

  it("reuses a freed slot for the next key", () => {
    const slots = new KeySlots<string>((key) => key);
    expect(slots.add("a")).to.equal(0);
    expect(slots.add("b")).to.equal(1);
    expect(slots.delete("a")).to.equal(0);
    expect(slots.at(0)).to.equal(undefined);
    expect(slots.add("c")).to.equal(0);
    expect([...slots.each()]).to.deep.equal(["c", "b"]);
    expect(slots.slotLimit).to.equal(2);
  });
});
