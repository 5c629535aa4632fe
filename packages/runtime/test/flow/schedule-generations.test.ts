import { expect } from "chai";
import { ScheduleGenerations } from "../../src/journal/schedule-generations.js";
import type { ScheduleStateRecord, SystemRecord } from "../../src/journal/system-records.js";

const state = (at: number): ScheduleStateRecord => ({ kind: "schedule-state", at, workflow: "report" }) as ScheduleStateRecord;
const pause = (at: number): SystemRecord => ({ kind: "schedule-pause", at, paused: at % 2 === 0 });

describe("a schedule's generations on recovery", () => {
  it("keeps the newest snapshot and the records after it, and names older generations as stale", () => {
    const g = new ScheduleGenerations();
    g.add(0, pause(1)); // before any snapshot: nothing to apply it to
    g.add(0, state(2));
    g.add(0, pause(3));
    g.add(1, state(4));
    g.add(0, pause(5)); // an old generation's record, read after the newer snapshot
    g.add(1, pause(6));
    g.add(1, pause(7));
    expect(g.generation).to.equal(1);
    expect(g.state?.at).to.equal(4);
    expect(g.records.map((r) => r.at)).to.deep.equal([6, 7]);
    expect(g.stale).to.deep.equal([0]);
  });

  it("ignores an older generation's snapshot read after a newer one", () => {
    const g = new ScheduleGenerations();
    g.add(2, state(10));
    g.add(1, state(11));
    g.add(2, pause(12));
    expect([g.generation, g.state?.at, g.records.map((r) => r.at), g.stale]).to.deep.equal([2, 10, [12], [1]]);
  });

  it("has no state while no snapshot was read", () => {
    const g = new ScheduleGenerations();
    g.add(3, pause(1));
    expect([g.state, g.records, g.stale]).to.deep.equal([undefined, [], []]);
  });
});
