import { expect } from "chai";
import { TimerQueue } from "../../src/engine/timer-queue.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";

describe("the durable timer queue", () => {
  it("fires every timer once, none before it is due, earliest first", async () => {
    const clock = new VirtualClock(0);
    const fired: { id: string; seq: number; at: number; now: number }[] = [];
    const queue = new TimerQueue(clock, (id, seq, at) => fired.push({ id, seq, at, now: clock.now() }));
    let seed = 7;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const added: string[] = [];
    for (let i = 0; i < 5_000; i++) {
      const at = next(10_000);
      queue.add(at, `run-${i}`, at % 97);
      added.push(`run-${i}/${at % 97}@${at}`);
    }
    expect(queue.size).to.equal(5_000);
    for (let t = 0; t < 10_000; t += 250) {
      await clock.advance(250);
      // Timers added while others are pending land in their place.
      if (t === 5_000) {
        queue.add(t + 100, "late", 1);
        queue.add(0, "overdue", 2);
        added.push(`late/1@${t + 100}`, `overdue/2@0`);
      }
    }
    expect(queue.size).to.equal(0);
    expect(fired.map((f) => `${f.id}/${f.seq}@${f.at}`).sort()).to.deep.equal([...added].sort());
    for (const f of fired) expect(f.now, f.id).to.be.at.least(f.at);
    const regular = fired.filter((f) => f.id !== "overdue" && f.id !== "late");
    for (let i = 1; i < regular.length; i++) expect(regular[i]!.at).to.be.at.least(regular[i - 1]!.at);
  });

  it("fires nothing while held, and what fell due once released", async () => {
    const clock = new VirtualClock(0);
    const fired: string[] = [];
    const queue = new TimerQueue(clock, (id) => fired.push(id));
    queue.hold();
    queue.add(10, "b", 1);
    queue.add(5, "a", 1);
    await clock.advance(20);
    expect(fired).to.deep.equal([]);
    queue.release();
    await clock.advance(0);
    expect(fired).to.deep.equal(["a", "b"]);
  });

  it("hands each timer's run and run number back when it fires", async () => {
    const clock = new VirtualClock(0);
    const fired: string[] = [];
    const queue = new TimerQueue<{ id: string }>(clock, (run, seq, at, runId) => fired.push(`${run.id}/${runId}/${seq}@${at}`));
    const a = { id: "a" };
    for (let i = 0; i < 200; i++) queue.add(1_000 - i, a, i, i + 1);
    queue.add(5, { id: "b" }, 1, 2 ** 32 + 7);
    await clock.advance(1_000);
    expect(fired).to.have.length(201);
    expect(fired[0]).to.equal("b/7/1@5");
    expect(fired[1]).to.equal("a/200/199@801");
    expect(fired[200]).to.equal("a/1/0@1000");
  });
});
