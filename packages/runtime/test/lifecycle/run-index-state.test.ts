import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { eventually, localKind, onEachEngine } from "../runtime/harness.js";

/** Ends as told, or waits for `go` (an hour at most) when told to wait. */
@Workflow("ending")
class Ending {
  constructor(private readonly ctx: Ctx) {}

  async run(how: "ok" | "fail" | "wait"): Promise<string> {
    if (how === "fail") throw new Error("told to fail");
    if (how === "wait") return String(await this.ctx.waitFor<string>("go", { timeout: "1h" }));
    return how;
  }
}

/** Waits for `go` with a timeout of `minutes`: its timer is call 1 of every run. */
@Workflow("deadline")
class Deadline {
  constructor(private readonly ctx: Ctx) {}

  async run(minutes: number): Promise<string> {
    return String(await this.ctx.waitFor<string>("go", { timeout: minutes * 60_000 }));
  }
}

describe("run index entries across a restart (local)", () => {
  it("keep how each run finished, when it started and when it ended", async () => {
    const local = localKind();
    // A start time of today's size, with low bits set, and runs started at different times.
    const clock = new VirtualClock(1_780_000_000_123);
    try {
      const first = await local.open({ workflows: [Ending] }, (c) => c.clock(clock));
      await (await first.start(Ending, "e-ok", "ok")).result();
      await clock.advance(1_234);
      await (await first.start(Ending, "e-fail", "fail")).result().catch(() => undefined);
      const cancelled = await first.start(Ending, "e-cancel", "wait");
      const terminated = await first.start(Ending, "e-terminate", "wait");
      await first.start(Ending, "e-open", "wait");
      await clock.advance(5_001);
      await cancelled.cancel();
      await terminated.terminate("no longer needed");
      await eventually("the cancel to end its run", async () => (await first.status("e-cancel"))?.status === "cancelled");
      const ids = ["e-ok", "e-fail", "e-cancel", "e-terminate", "e-open"];
      const before = await Promise.all(ids.map((id) => first.status(id)));
      expect(before.map((s) => s?.status)).to.deep.equal(["ok", "failed", "cancelled", "terminated", "suspended"]);
      expect(before.map((s) => s?.startedAt)).to.deep.equal([1_780_000_000_123, ...Array(4).fill(1_780_000_001_357)]);
      await first.shutdown();

      const engine = await local.reopen({ workflows: [Ending] }, (c) => c.clock(clock));
      const after = await Promise.all(ids.map((id) => engine.status(id)));
      expect(after.slice(0, 4)).to.deep.equal(before.slice(0, 4));
      expect([after[4]?.startedAt, after[4]?.endedAt]).to.deep.equal([1_780_000_001_357, undefined]);
      expect(after[4]?.status).to.be.oneOf(["parked", "suspended", "running"]);
      expect((await engine.listWhere({ endedAt: { gte: 1_780_000_001_357 } }, 10)).map((s) => s.id).sort()).to.deep.equal([
        "e-cancel",
        "e-fail",
        "e-terminate",
      ]);
      await engine.shutdown();
    } finally {
      await local.cleanup();
    }
  });
});

onEachEngine("timers of earlier runs of an ID", (kind) => {
  it("never fire into the ID's next run, whose own timer fires when due", async () => {
    const clock = new VirtualClock();
    const engine = await kind().open({ workflows: [Deadline] }, (c) => c.clock(clock));
    const earlier = await engine.start(Deadline, "d-1", 10);
    await eventually("the earlier run's timer", async () => (await earlier.describe()).journal.some((r) => r.kind === "timer"));
    await earlier.signal("go", "early");
    expect(await earlier.result()).to.equal("early");
    // The earlier run's timer (call 1, due in 10 minutes) stays queued; the next run's call 1 is due in 30.
    const next = await engine.start(Deadline, "d-1", 30);
    await eventually("the next run's timer", async () => (await next.describe()).journal.some((r) => r.kind === "timer"));
    await clock.advance("20m");
    expect((await next.describe()).journal.map((r) => r.kind)).to.not.include("fired");
    expect((await engine.status("d-1"))?.status).to.be.oneOf(["suspended", "parked"]);
    await clock.advance("11m");
    expect(await next.result()).to.equal("undefined");
    await engine.shutdown();
  });

  it("never fire into a run of the same ID started after retention forgot the earlier one", async () => {
    const clock = new VirtualClock();
    const engine = await kind().open({ workflows: [Deadline] }, (c) => c.clock(clock).retention("1m"));
    const earlier = await engine.start(Deadline, "d-2", 60);
    await eventually("the earlier run's timer", async () => (await earlier.describe()).journal.some((r) => r.kind === "timer"));
    await earlier.signal("go", "early");
    expect(await earlier.result()).to.equal("early");
    for (let i = 0; i < 50 && (await engine.status("d-2")) !== undefined; i++) {
      await clock.advance("1m");
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await engine.status("d-2"), "retention forgot the earlier run").to.equal(undefined);
    // The new run is run 1 of the ID again, its timer call 1 again, due well after the earlier one.
    const next = await engine.start(Deadline, "d-2", 120);
    expect((await next.status()).runId).to.equal(1);
    await eventually("the next run's timer", async () => (await next.describe()).journal.some((r) => r.kind === "timer"));
    await clock.advance("70m");
    expect((await next.describe()).journal.map((r) => r.kind)).to.not.include("fired");
    // Asked before it ends: retention forgets this run too a minute after.
    const result = next.result();
    await clock.advance("60m");
    expect(await result).to.equal("undefined");
    await engine.shutdown();
  });
});
