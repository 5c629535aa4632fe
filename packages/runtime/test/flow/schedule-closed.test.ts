import { expect } from "chai";
import { initialState } from "../../src/journal/schedule-state.js";
import type { SystemRecord } from "../../src/journal/system-records.js";
import type { FlowRuns } from "../../src/engine/flow-runs.js";
import { ScheduleRuntime, type ScheduleDeps } from "../../src/engine/schedule-runtime.js";
import type { SystemLog } from "../../src/engine/system-streams.js";
import type { RunStatus } from "../../src/client/types.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";

const T0 = Date.UTC(2030, 0, 1);
const SETTINGS = {
  workflow: "w",
  everyMs: 1_000,
  cron: undefined,
  timezone: undefined,
  overlap: "skip",
  catchUp: "none",
  input: null,
} as const;

/**
 * A schedule on a log and runs held in memory, whose status reads wait until the test lets them
 * go: what the schedule does after its shard is let go, while such a read is under way, is seen.
 */
function harness(active: readonly string[] = []) {
  const appended: SystemRecord[] = [];
  const started: string[] = [];
  const reads: Array<() => void> = [];
  const sys = {
    append: async (_f: string, _n: string, _g: number, record: SystemRecord) => void appended.push(record),
    drop: async () => undefined,
    shardOf: () => 0,
  } as unknown as SystemLog;
  const runs: FlowRuns = {
    start: async (_type, id) => void started.push(id),
    awaitResult: () => new Promise(() => undefined),
    status: (id) =>
      new Promise<RunStatus | undefined>((resolve) =>
        reads.push(() => resolve({ id, runId: 1, type: "w", status: "running" } as unknown as RunStatus)),
      ),
    terminate: async () => undefined,
    cancel: async () => undefined,
  };
  const clock = new VirtualClock(T0 + 5_500);
  const deps: ScheduleDeps = { sys, runs, clock, failed: (e) => expect.fail(`the schedule failed: ${String(e)}`) };
  const state = { ...initialState(SETTINGS, false, T0), active: [...active] };
  const schedule = new ScheduleRuntime("s", state, 0, deps);
  const letReadsGo = async (): Promise<void> => {
    for (let i = 0; i < 10; i++) {
      for (const go of reads.splice(0)) go();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { schedule, appended, started, letReadsGo, clock };
}

describe("a schedule closed while its work is under way (its shard let go, or the engine shut down)", () => {
  it("records nothing after it was closed: a run found by its recovery is left to the schedule's next holder", async () => {
    const h = harness();
    h.schedule.open();
    h.schedule.close();
    await h.letReadsGo();
    expect(h.appended, "records appended after close").to.deep.equal([]);
  });

  it("starts no run after it was closed: an instant whose overlap check was reading statuses is left alone", async () => {
    const h = harness([`s@${T0}`]);
    const triggered = h.schedule.trigger().catch(() => undefined);
    h.schedule.close();
    await h.letReadsGo();
    await triggered;
    expect(h.started, "runs started after close").to.deep.equal([]);
    expect(h.appended, "records appended after close").to.deep.equal([]);
  });
});
