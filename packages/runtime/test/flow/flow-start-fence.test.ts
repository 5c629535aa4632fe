import { expect } from "chai";
import { Batcher } from "../../src/engine/batches.js";
import { Debouncer } from "../../src/engine/debounce.js";
import type { FlowRuns } from "../../src/engine/flow-runs.js";
import { Batch, Debounce } from "../../src/engine/flow-rules.js";
import type { SystemLog } from "../../src/engine/system-streams.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { scheduleHarness, SHARD, T0 } from "./fixtures/schedule-harness.js";

// A start forwarded to another process of a cluster is performed only while the shard it is asked
// on behalf of is still held by the asking process: every start of a schedule or a window names
// the shard of its stream, so a holder stopped past its lease has none of them land late.

describe("a schedule's starts", () => {
  it("are asked on behalf of the schedule's shard: live instants, triggers and backfills", async () => {
    const fences = new Map<string, number>();
    const h = scheduleHarness({ start: async (id, fence) => void fences.set(id, fence), settings: { overlap: "allow-all" } });
    h.schedule.open();
    const triggered = h.schedule.trigger();
    const backfilled = h.schedule.backfill(T0 - 3_000, T0 - 1_000);
    for (let i = 0; i < 5; i++) {
      await h.letReadsGo();
      await h.clock.advance(1_000);
    }
    await Promise.all([triggered, backfilled]);
    const ids = [...fences.keys()];
    expect(
      ids.filter((id) => Number(id.slice(2)) < T0),
      "backfilled runs",
    ).to.have.length(3);
    expect(ids, "the triggered run").to.include(`s@${T0 + 5_500}`);
    expect(
      ids.filter((id) => Number(id.slice(2)) > T0 + 5_500),
      "live runs",
    ).to.have.length.greaterThan(2);
    expect(new Set(fences.values()), "the shards the starts were asked on behalf of").to.deep.equal(new Set([SHARD]));
  });
});

describe("a debounce window's and a batch's starts", () => {
  it("are asked on behalf of the shard of their key", async () => {
    const fences: [string, number][] = [];
    const shards: Record<string, number> = { "debounce/doc": 3, "batch/tenant": 5 };
    const sys = {
      append: async () => undefined,
      drop: async () => undefined,
      shardOf: (family: string, key: string) => shards[`${family}/${key}`],
      holds: () => true,
    } as unknown as SystemLog;
    const runs = {
      start: async (_type: string, id: string, _input: unknown, _options: unknown, fence: number) => void fences.push([id, fence]),
    } as unknown as FlowRuns;
    const clock = new VirtualClock(T0);
    const failed: unknown[] = [];
    const debounced = await new Debouncer(sys, runs, clock, (e) => void failed.push(e)).debounce(
      "w",
      "doc",
      1,
      Debounce.of("1s"),
      undefined,
    );
    const batched = await new Batcher(sys, runs, clock, (e) => void failed.push(e)).batch("w", "tenant", 1, Batch.of(1, "1s"), undefined);
    await clock.advance("1s");
    expect(new Map(fences)).to.deep.equal(
      new Map([
        [debounced, 3],
        [batched, 5],
      ]),
    );
    expect(failed).to.deep.equal([]);
  });
});
