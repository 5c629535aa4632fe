import { expect } from "chai";
import type { RunStatus } from "../../src/client/types.js";
import { shardOf } from "../../src/core/ids.js";
import type { LocalRuns } from "../../src/engine/local-runs.js";
import { routedRuns, type ClusterTransport } from "../../src/engine/routed-runs.js";

const SHARDS = 4;

/** A run ID of each shard. */
function idOn(shard: number): string {
  for (let i = 0; ; i++) if (shardOf(`run-${i}`, SHARDS) === shard) return `run-${i}`;
}

const status = (id: string, s: RunStatus["status"]): RunStatus => ({ id, status: s, startedAt: 1 }) as RunStatus;

describe("a cluster process listing every shard's runs while one of its shards moves", () => {
  it("lists a run of a shard it does not hold as its owner tells, once, not also as its own memory still has it", async () => {
    const mine = idOn(0);
    const moved = idOn(1);
    // This process holds shard 0; shard 1's runs are still in its memory (the shard being let go, or
    // being recovered), but the shard's owner answers for them.
    const inMemory = [status(mine, "running"), status(moved, "running")];
    const local = {
      listHeld: (_filter: unknown, _limit: number, held: (shard: number) => boolean = () => true) =>
        inMemory.filter((r) => held(shardOf(r.id, SHARDS))),
    } as unknown as LocalRuns;
    const transport: ClusterTransport = {
      owns: (shard) => shard === 0,
      forward: async (shard) => (shard === 1 ? [status(moved, "ok")] : []),
    };
    const listed = await routedRuns(local, transport, SHARDS).listAll({}, 100);
    expect(listed.map((r) => [r.id, r.status]).sort()).to.deep.equal(
      [
        [mine, "running"],
        [moved, "ok"],
      ].sort(),
    );
  });
});
