import "reflect-metadata";
import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { scheduleHarness, T0 } from "./fixtures/schedule-harness.js";

/**
 * A holder of the schedule's shard recorded a trigger's instant as being started and stopped before
 * it recorded the start; the next holder finishes that start. Its first attempt fails (the run's
 * shard is another process's, and the call to it was cut short), so it is tried again after the
 * catch-up of the instants missed while down has covered the triggered instant, and while a run of
 * the schedule is going.
 */
function recoveredTrigger(start: (id: string) => Promise<void>) {
  const triggered = T0 + 2_500;
  const h = scheduleHarness({ active: ["elsewhere"], start, settings: { overlap: "skip", catchUp: "one" } });
  h.schedule.apply({ kind: "schedule-tick", at: T0 + 2_500, instant: triggered, outcome: "triggering", source: "trigger" });
  return { ...h, triggered, id: `s@${triggered}` };
}

async function settle(h: ReturnType<typeof recoveredTrigger>): Promise<void> {
  for (let i = 0; i < 6; i++) {
    await h.letReadsGo();
    await h.clock.advance(10_000);
  }
  await h.letReadsGo();
}

describe("a trigger a stopped holder recorded, finished by the shard's next holder", () => {
  it("starts the triggered instant's run and counts it, though catch-up covered the instant and another run is going", async () => {
    let failures = 1;
    const h = recoveredTrigger(async () => {
      if (failures-- > 0) throw new StorageError("the run's shard did not answer", { shard: 3 });
    });
    h.schedule.open();
    await settle(h);
    expect(h.started, "the triggered instant's run").to.include(h.id);
    const ticks = h.appended
      .filter((r) => r.kind === "schedule-tick" && r.instant === h.triggered)
      .map((r) => (r as { outcome: string }).outcome);
    expect(ticks, "the trigger's decision was taken before the stop: its instant is started, not skipped").to.deep.equal(["started"]);
    expect(h.schedule.describe().recentRuns).to.include(h.id);
    expect(h.failed).to.deep.equal([]);
  });

  it("counts a run the stopped holder had started before its record, once", async () => {
    let failures = 1;
    const h = recoveredTrigger(async () => {
      if (failures-- > 0) throw new StorageError("the run's shard did not answer", { shard: 3 });
    });
    h.started.push(h.id);
    h.schedule.open();
    await settle(h);
    expect(h.started.filter((id) => id === h.id)).to.have.length(1);
    const startedTicks = h.appended.filter((r) => r.kind === "schedule-tick" && r.outcome === "started" && r.instant === h.triggered);
    expect(startedTicks, "the run is counted once").to.have.length(1);
    expect(h.schedule.describe().recentRuns).to.include(h.id);
  });
});
