import "reflect-metadata";
import { expect } from "chai";
import { NotFoundError, RejectedError } from "../../src/core/errors.js";
import type { Duration } from "../../src/core/duration.js";
import { Batch, Debounce } from "../../src/engine/flow-rules.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { localKind, onEachEngine, sleep, type EngineKind } from "../runtime/harness.js";

let reindexStarts = 0;

@Workflow()
class Reindex {
  async run(n: number): Promise<number> {
    reindexStarts++;
    return n;
  }
}

@Workflow()
class Notify {
  async run(n: number): Promise<number> {
    return n * 10;
  }
}

@Workflow()
class Bulk {
  async run(events: number[]): Promise<number[]> {
    return events;
  }
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe("debounce and batches", () => {
  onEachEngine("engine.debounce", (kind) => {
    it("collapses the starts of one window into one run with the latest input", async () => {
      reindexStarts = 0;
      const engine = await kind().open({ workflows: [Reindex] });
      const rule = Debounce.of("150ms");
      const a = await engine.debounce(Reindex, "doc-1", 1, rule);
      const b = await engine.debounce(Reindex, "doc-1", 2, rule);
      const other = await engine.debounce(Reindex, "doc-2", 20, rule);
      const c = await engine.debounce(Reindex, "doc-1", 3, rule);
      expect(a.id).to.equal(b.id).and.equal(c.id);
      expect(a.id).to.not.equal(other.id);
      expect(a.id.startsWith("doc-1@"), a.id).to.equal(true);
      expect(await rejection(a.status()), "nothing runs until the window closes").to.be.instanceOf(NotFoundError);
      await a.started();
      expect(await a.result()).to.equal(3);
      await other.started();
      expect(await other.result()).to.equal(20);
      expect(reindexStarts).to.equal(2);

      const d = await engine.debounce(Reindex, "doc-1", 4, rule);
      expect(d.id, "a start after the window closed opens a new one").to.not.equal(a.id);
      await d.started();
      expect(await d.result()).to.equal(4);
      await engine.shutdown();
    });

    it("bounds a window that starts keep extending by its maxWait", async () => {
      const engine = await kind().open({ workflows: [Reindex] });
      const capped = Debounce.of("80ms").maxWait("200ms");
      const ids = new Set<string>();
      const begin = Date.now();
      for (let n = 100; Date.now() - begin < 700; n++) {
        ids.add((await engine.debounce(Reindex, "busy", n, capped)).id);
        await sleep(20);
      }
      expect(ids.size).to.be.at.least(3);
      for (const id of ids) {
        const run = engine.run<number>(id);
        await run.started();
        await run.result();
      }
      await engine.shutdown();
    });

    it("joins a retried event ID to its window once, and answers it with the run once fired", async () => {
      const engine = await kind().open({ workflows: [Notify] });
      const rule = Debounce.of("100ms");
      const first = await engine.debounce(Notify, "user-1", 1, rule, { eventId: "e-1" });
      const retried = await engine.debounce(Notify, "user-1", 9, rule, { eventId: "e-1" });
      expect(retried.id).to.equal(first.id);
      await first.started();
      expect(await first.result(), "the retry changed nothing").to.equal(10);
      const late = await engine.debounce(Notify, "user-1", 9, rule, { eventId: "e-1" });
      expect(late.id).to.equal(first.id);
      expect((await engine.list(100)).filter((r) => r.type === "Notify")).to.have.length(1);
      await engine.shutdown();
    });

    it("refuses a rule that cannot work, a reserved key, and another type on an open window", async () => {
      const engine = await kind().open({ workflows: [Notify, Reindex] });
      expect(await rejection(engine.debounce(Notify, "k", 1, Debounce.of("1s").maxWait("10ms")))).to.be.instanceOf(RejectedError);
      expect(await rejection(engine.debounce(Notify, "k", 1, Debounce.of("soon" as string as Duration)))).to.be.instanceOf(RejectedError);
      expect(await rejection(engine.debounce(Notify, "$k", 1, Debounce.of("1s")))).to.be.instanceOf(RejectedError);
      await engine.debounce(Notify, "k", 1, Debounce.of("1s"));
      const error = await rejection(engine.debounce(Reindex, "k", 1, Debounce.of("1s")));
      expect(error).to.be.instanceOf(RejectedError);
      expect((error as Error).message).to.contain("'Notify'");
      await engine.shutdown();
    });
  });

  onEachEngine("engine.batch", (kind) => {
    it("starts one run per full or timed-out batch, with the events in arrival order", async () => {
      const engine = await kind().open({ workflows: [Bulk] });
      const rule = Batch.of(3, "200ms");
      const handles = [];
      for (let i = 0; i < 7; i++) handles.push(await engine.batch(Bulk, "tenant-1", i, rule));
      const again = await engine.batch(Bulk, "tenant-1", 7, rule, { eventId: "evt-7" });
      const dup = await engine.batch(Bulk, "tenant-1", 7, rule, { eventId: "evt-7" });
      expect(again.id).to.equal(dup.id);
      const ids = handles.map((h) => h.id);
      expect(ids[0]).to.equal(ids[2]);
      expect(ids[2]).to.not.equal(ids[3]);
      expect(ids[3]).to.equal(ids[5]);
      expect(ids[5]).to.not.equal(ids[6]);
      expect(ids[6]).to.equal(again.id);
      const results = [];
      for (const id of [ids[0], ids[3], ids[6]] as string[]) {
        const run = engine.run<number[]>(id);
        await run.started();
        results.push(await run.result());
      }
      expect(results).to.deep.equal([
        [0, 1, 2],
        [3, 4, 5],
        [6, 7],
      ]);
      await engine.shutdown();
    });

    it("refuses a rule that cannot work before anything is written", async () => {
      const engine = await kind().open({ workflows: [Bulk] });
      for (const rule of [Batch.of(0, 0), Batch.of(3, 0), Batch.of(1.5, "1s"), Batch.of(3, "later" as string as Duration)]) {
        expect(await rejection(engine.batch(Bulk, "tenant-1", 1, rule))).to.be.instanceOf(RejectedError);
      }
      expect(await engine.list(10)).to.deep.equal([]);
      await engine.shutdown();
    });
  });

  describe("across a restart (local)", () => {
    let local: EngineKind;
    beforeEach(() => {
      local = localKind();
    });
    afterEach(() => local.cleanup());

    it("keeps an acknowledged debounced start whose window was open at shutdown", async () => {
      const rule = Debounce.of("300ms");
      const first = await local.open({ workflows: [Notify] });
      const a = await first.debounce(Notify, "user-9", 1, rule, { eventId: "e-1" });
      const b = await first.debounce(Notify, "user-9", 2, rule, { eventId: "e-2" });
      expect(a.id).to.equal(b.id);
      await first.shutdown();

      const engine = await local.reopen({ workflows: [Notify] });
      const retried = await engine.debounce(Notify, "user-9", 2, rule, { eventId: "e-2" });
      expect(retried.id).to.equal(a.id);
      const run = engine.run<number>(a.id);
      await run.started();
      expect(await run.result()).to.equal(20);
      const late = await engine.debounce(Notify, "user-9", 2, rule, { eventId: "e-2" });
      expect(late.id).to.equal(a.id);
      expect((await engine.list(100)).filter((r) => r.type === "Notify")).to.have.length(1);
      await engine.shutdown();

      const third = await local.reopen({ workflows: [Notify] });
      const next = await third.debounce(Notify, "user-9", 5, rule, { eventId: "e-3" });
      expect(next.id, "window numbers grow across restarts").to.not.equal(a.id);
      expect(await (await third.debounce(Notify, "user-9", 2, rule, { eventId: "e-2" })).id).to.equal(a.id);
      await next.started();
      expect(await next.result()).to.equal(50);
      await third.shutdown();
    });

    it("completes a batch that was half full at shutdown", async () => {
      const rule = Batch.of(4, "300ms");
      const first = await local.open({ workflows: [Bulk] });
      const a = await first.batch(Bulk, "t-1", 1, rule, { eventId: "x-1" });
      await first.batch(Bulk, "t-1", 2, rule, { eventId: "x-2" });
      await first.shutdown();

      const engine = await local.reopen({ workflows: [Bulk] });
      const retried = await engine.batch(Bulk, "t-1", 2, rule, { eventId: "x-2" });
      expect(retried.id).to.equal(a.id);
      const c = await engine.batch(Bulk, "t-1", 3, rule, { eventId: "x-3" });
      const d = await engine.batch(Bulk, "t-1", 4, rule, { eventId: "x-4" });
      expect([c.id, d.id]).to.deep.equal([a.id, a.id]);
      const run = engine.run<number[]>(a.id);
      await run.started();
      expect(await run.result()).to.deep.equal([1, 2, 3, 4]);
      await engine.shutdown();
    });

    it("fires a window whose deadline passed while the engine was down", async () => {
      const first = await local.open({ workflows: [Notify] });
      const a = await first.debounce(Notify, "late", 7, Debounce.of("50ms"));
      await first.shutdown();
      await sleep(120);
      const engine = await local.reopen({ workflows: [Notify] });
      const run = engine.run<number>(a.id);
      await run.started();
      expect(await run.result()).to.equal(70);
      await engine.shutdown();
    });
  });

  describe("on a virtual clock", () => {
    it("runs a one-hour debounce in milliseconds", async () => {
      const engine = await TestEngine.create({ workflows: [Notify] });
      const rule = Debounce.of("1h").maxWait("3h");
      const a = await engine.debounce(Notify, "digest", 1, rule);
      await engine.clock.advance("59m");
      await engine.debounce(Notify, "digest", 2, rule);
      await engine.clock.advance("59m");
      expect(await engine.status(a.id), "each start pushes the window out").to.equal(undefined);
      await engine.clock.advance("1h");
      expect(await a.result()).to.equal(20);
      expect(engine.clock.pendingTimers).to.equal(0);
      await engine.shutdown();
    });

    it("closes a batch at its timeout", async () => {
      const engine = await TestEngine.create({ workflows: [Bulk] });
      const a = await engine.batch(Bulk, "nightly", 1, Batch.of(100, "1d"));
      await engine.clock.advance("23h");
      await engine.batch(Bulk, "nightly", 2, Batch.of(100, "1d"));
      expect(await engine.status(a.id)).to.equal(undefined);
      await engine.clock.advance("1h");
      expect(await a.result()).to.deep.equal([1, 2]);
      await engine.shutdown();
    });
  });
});
