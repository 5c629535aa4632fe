import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import type { ScheduleStateRecord } from "../../src/journal/system-records.js";
import { scheduleHarness, T0 } from "./fixtures/schedule-harness.js";

/** How a forwarded start fails when this process's database session is terminated under it. */
const lostSession = (): StorageError =>
  new StorageError("forwarding start request 1 to the owner of shard 2 failed: terminating connection due to administrator command");

/** A schedule whose runs may overlap, whose first start fails so. */
function allowAllFailingOnce(): ReturnType<typeof scheduleHarness> {
  let failures = 1;
  return scheduleHarness({
    settings: { overlap: "allow-all" },
    start: async () => {
      if (failures-- > 0) throw lostSession();
    },
  });
}

describe("a schedule whose start of a run fails with a StorageError of another shard (a cluster's forwarded start)", () => {
  it("does not fail the engine and starts the instant when it tries again", async () => {
    const h = allowAllFailingOnce();
    h.schedule.open();
    await h.letReadsGo();
    await h.clock.advance("500ms");
    await h.letReadsGo();
    expect(h.started, "no run yet: the first start failed").to.deep.equal([]);
    await h.clock.advance("2s");
    await h.letReadsGo();
    expect(h.started, "the instant's run, started by the retry").to.include(`s@${T0 + 6_000}`);
    expect(h.schedule.describe().lastError).to.match(/terminating connection/);
    expect(h.failed, "failures the schedule reported as the engine's").to.deep.equal([]);
  });

  it("goes on with a backfill whose page failed so", async () => {
    const h = allowAllFailingOnce();
    h.schedule.open();
    await h.letReadsGo();
    // Instants before the schedule was created: none was dealt with.
    await h.schedule.backfill(T0 - 3_000, T0 - 1_000);
    await h.letReadsGo();
    await h.clock.advance("2s");
    await h.letReadsGo();
    const backfilled = [3, 2, 1].map((s) => `s@${T0 - s * 1_000}`);
    expect(h.started.filter((id) => backfilled.includes(id)).sort()).to.deep.equal(backfilled);
    expect(h.schedule.describe().backfills).to.deep.equal([]);
    expect(h.failed, "failures the schedule reported as the engine's").to.deep.equal([]);
  });

  it("deals with an instant whose overlap check could not read the running run's status, when it tries again", async () => {
    const h = scheduleHarness({ active: [`s@${T0}`], statusFailures: { count: 1, error: lostSession } });
    h.schedule.open();
    await h.letReadsGo();
    await h.clock.advance("500ms");
    await h.letReadsGo();
    await h.clock.advance("2s");
    await h.letReadsGo();
    const ticked = h.appended.flatMap((r) => (r.kind === "schedule-tick" ? [r.instant] : []));
    expect(ticked, "the instant of 6 s dealt with (skipped beside the running run)").to.include(T0 + 6_000);
    expect(h.failed, "failures the schedule reported as the engine's").to.deep.equal([]);
  });

  it("leaves the instant to the next engine when a snapshot of its stream is written before the start is tried again", async () => {
    let failures = 1;
    const h = scheduleHarness({
      start: async () => {
        if (failures-- > 0) throw lostSession();
      },
    });
    h.schedule.open();
    await h.letReadsGo();
    await h.clock.advance("500ms");
    await h.letReadsGo();
    expect(h.started, "no run yet: the first start failed").to.deep.equal([]);
    // Missed instants are started from now on: the next engine starts the instant if it was left to it.
    await h.schedule.update({ ...h.schedule.settings, catchUp: "one" });
    const snapshot = h.appended.at(-1) as ScheduleStateRecord;
    expect(snapshot.kind).to.equal("schedule-state");

    // The engine stops before the start is tried again; the next one opens on the snapshot.
    const next = scheduleHarness({ state: snapshot });
    await next.clock.advance("1s");
    next.schedule.open();
    await next.letReadsGo();
    expect(next.started, "the instant's run, started by the next engine's catch-up").to.deep.equal([`s@${T0 + 6_000}`]);
  });
});
