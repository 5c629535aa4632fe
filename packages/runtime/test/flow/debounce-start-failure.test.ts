import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { Debouncer } from "../../src/engine/debounce.js";
import type { FlowRuns } from "../../src/engine/flow-runs.js";
import { Debounce } from "../../src/engine/flow-rules.js";
import type { SystemLog } from "../../src/engine/system-streams.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";

describe("a debounce window whose run's start fails with a StorageError of another shard (a cluster's forwarded start)", () => {
  it("does not fail the engine and starts the run when it tries again", async () => {
    const started: string[] = [];
    const failed: unknown[] = [];
    let failures = 1;
    const sys = { append: async () => undefined, drop: async () => undefined, shardOf: () => 0, holds: () => true } as unknown as SystemLog;
    const runs = {
      start: async (_type: string, id: string) => {
        if (failures-- > 0)
          throw new StorageError("forwarding start request 1 to the owner of shard 2 failed: terminating connection", { shard: 2 });
        started.push(id);
      },
    } as unknown as FlowRuns;
    const clock = new VirtualClock(Date.UTC(2030, 0, 1));
    const debouncer = new Debouncer(sys, runs, clock, (e) => void failed.push(e));
    const runId = await debouncer.debounce("w", "k", 1, Debounce.of("1s"), undefined);
    await clock.advance("1s");
    expect(started, "the first start failed").to.deep.equal([]);
    await clock.advance("2s");
    expect(started, "the window's run, started by the retry").to.deep.equal([runId]);
    expect(failed, "failures reported as the engine's").to.deep.equal([]);
  });
});
