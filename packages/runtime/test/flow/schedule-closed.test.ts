import { expect } from "chai";
import { scheduleHarness, T0 } from "./fixtures/schedule-harness.js";

describe("a schedule closed while its work is under way (its shard let go, or the engine shut down)", () => {
  it("records nothing after it was closed: a run found by its recovery is left to the schedule's next holder", async () => {
    const h = scheduleHarness();
    h.schedule.open();
    h.schedule.close();
    await h.letReadsGo();
    expect(h.appended, "records appended after close").to.deep.equal([]);
    expect(h.failed).to.deep.equal([]);
  });

  it("starts no run after it was closed: an instant whose overlap check was reading statuses is left alone", async () => {
    const h = scheduleHarness({ active: [`s@${T0}`] });
    const triggered = h.schedule.trigger().catch(() => undefined);
    h.schedule.close();
    await h.letReadsGo();
    await triggered;
    expect(h.started, "runs started after close").to.deep.equal([]);
    expect(h.appended, "records appended after close").to.deep.equal([]);
  });
});
