import { expect } from "chai";
import { shardOf } from "../../src/core/ids.js";
import { type ClusterWorker, holders, rerunsAfterAck, useClusterPair } from "./support/cluster.js";
import { hideFirstEntry, leaseOf, reviveEntry } from "./support/damage.js";
import { useSchemas } from "./support/database.js";
import { uniqueOwner } from "./support/faults.js";
import { eventually } from "../support/wait.js";

const SHARDS = 8;
const LEASE_MS = 1_500;
// Long enough for a forwarded call to get through on a loaded machine.
const FORWARD_TIMEOUT_MS = 3_000;
const ENV = { FUSEE_TEST_FORWARD_TIMEOUT_MS: String(FORWARD_TIMEOUT_MS) };

/** An engine event as the worker reports it. */
interface WorkerEvent {
  readonly kind: string;
  /** When the worker heard of it, on its clock. */
  readonly at: number;
  readonly shard?: number;
  readonly reason?: string;
  readonly message?: string;
}

describe("A PostgreSQL cluster with a shard whose runs cannot be recovered (real processes)", function () {
  this.timeout(150_000);
  const schema = useSchemas();
  const cluster = useClusterPair(schema, { shards: SHARDS, leaseMs: LEASE_MS });

  /** Two processes with owner names of their own on a fresh schema, each holding half of the shards. */
  const pair = async (): Promise<[ClusterWorker, ClusterWorker, string]> => {
    const name = schema();
    const x = await cluster.spawn(uniqueOwner("x"), name, ENV);
    const y = await cluster.spawn(uniqueOwner("y"), name, ENV);
    await eventually(
      "the shards to split evenly",
      async () => {
        const h = await holders(name);
        return h.filter((o) => o === x.owner).length === SHARDS / 2 && h.filter((o) => o === y.owner).length === SHARDS / 2;
      },
      20_000,
    );
    return [x, y, name];
  };

  const ids = Array.from({ length: 40 }, (_, i) => `job-${i}`);
  const inputOf = (id: string): number => Number(id.slice("job-".length));

  /** Starts every run through the workers in turn (each waits for its signal after its second step); waits until all wait. */
  const startWaitingRuns = async (via: readonly ClusterWorker[]): Promise<void> => {
    const input = (id: string): unknown => ({ n: inputOf(id), wait: true, stepMs: 5 });
    await Promise.all(ids.map((id, i) => via[i % via.length]!.send({ op: "start", id, input: input(id) })));
    await eventually(
      "every run to wait for its signal",
      () => {
        const waiting = new Set(
          cluster
            .steps()
            .map((l) => l.split(" "))
            .filter(([kind, , step]) => kind === "ack" && step === "s2")
            .map(([, id]) => id),
        );
        return ids.every((id) => waiting.has(id));
      },
      30_000,
    );
  };

  /** The shard `y` holds with the most runs, its runs, and the runs of `y`'s other shards. */
  const damageable = async (name: string, y: ClusterWorker): Promise<{ shard: number; runs: string[]; others: string[] }> => {
    const owners = await holders(name);
    const ofY = ids.filter((id) => owners[shardOf(id, SHARDS)] === y.owner);
    const shard = [...new Set(ofY.map((id) => shardOf(id, SHARDS)))]
      .map((s) => ({ s, n: ofY.filter((id) => shardOf(id, SHARDS) === s).length }))
      .sort((a, b) => b.n - a.n)[0]!.s;
    const runs = ids.filter((id) => shardOf(id, SHARDS) === shard);
    const others = ofY.filter((id) => shardOf(id, SHARDS) !== shard);
    expect(runs.length, "runs in the shard to damage").to.be.at.least(2);
    expect(others.length, "runs in the other shards of the process to kill").to.be.greaterThan(0);
    return { shard, runs, others };
  };

  const events = (w: ClusterWorker): Promise<WorkerEvent[]> => w.send<WorkerEvent[]>({ op: "events" });
  /** The times `w` gave `shard` up because it could not recover it. */
  const givenUp = async (w: ClusterWorker, shard: number): Promise<WorkerEvent[]> =>
    (await events(w)).filter((e) => e.kind === "lease-lost" && e.reason === "failed" && e.shard === shard);
  const epochOf = (e: WorkerEvent): number => Number(/at epoch (\d+)/.exec(e.message ?? "")?.[1]);

  /** Signals each run through `via` and expects its result: the runs finish. */
  const finish = async (via: ClusterWorker, runs: readonly string[]): Promise<void> => {
    await Promise.all(runs.map((id) => via.send({ op: "signal", id, by: "test" })));
    const results = await Promise.all(runs.map((id) => via.send<string>({ op: "result", id })));
    expect(results).to.deep.equal(runs.map((id) => `${inputOf(id) + 10} by test`));
  };

  /** A call that must fail: its error and how long it took, or a failure of the test when it hangs. */
  const failingCall = async (w: ClusterWorker, command: Record<string, unknown>): Promise<{ error: Error; ms: number }> => {
    const began = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${JSON.stringify(command)} got no answer within 30 s`)), 30_000);
    });
    try {
      const outcome = await Promise.race([
        w.send(command).then(
          () => undefined,
          (e: Error) => e,
        ),
        hung,
      ]);
      if (outcome === undefined) throw new Error(`${JSON.stringify(command)} succeeded on a shard no process could recover`);
      return { error: outcome, ms: Date.now() - began };
    } finally {
      clearTimeout(timer);
    }
  };

  const expectNoFatal = async (w: ClusterWorker): Promise<void> => {
    expect(w.process.exitCode, `${w.owner} is still running`).to.equal(null);
    expect((await events(w)).filter((e) => e.kind === "shard-fatal")).to.deep.equal([]);
  };

  it("gives the shard up, answers calls on its runs with a timeout, runs its other shards, and recovers it once repaired", async () => {
    const [x, y, name] = await pair();
    await startWaitingRuns([x, y]);
    const { shard, runs, others } = await damageable(name, y);
    const at = await hideFirstEntry(name, shard, `${runs[0]}#1`);
    await y.kill();

    // The survivor takes the dead process's shards, fails to recover the damaged one and gives it up.
    await eventually("the survivor to give the damaged shard up", async () => (await givenUp(x, shard)).length >= 1, 30_000);
    const [first] = await givenUp(x, shard);
    expect(first!.message).to.match(new RegExp(`before its start record`));
    await eventually(
      "the damaged shard's lease to be free",
      async () => {
        const lease = await leaseOf(name, shard);
        return !lease.live || lease.owner !== x.owner;
      },
      10_000,
    );
    // A later attempt takes the shard again, at a new epoch, and gives it up again.
    await eventually("a second attempt at the damaged shard", async () => (await givenUp(x, shard)).length >= 2, 30_000);
    const [once, again] = await givenUp(x, shard);
    expect(epochOf(again!)).to.be.greaterThan(epochOf(once!));

    // The shards taken along with it run their runs, and so do the survivor's own.
    await eventually(
      "the survivor to recover the dead process's other shards",
      async () => (await Promise.all(others.map((id) => x.send<boolean>({ op: "holds", id })))).every(Boolean),
      30_000,
    );
    await finish(
      x,
      ids.filter((id) => !runs.includes(id)),
    );

    // Calls on a run of the damaged shard fail with a typed error instead of waiting for an owner.
    for (const command of [
      { op: "signal", id: runs[1], by: "test" },
      { op: "status", id: runs[1] },
    ]) {
      const { error, ms } = await failingCall(x, command);
      expect(error.name, `${command.op} on the damaged shard`).to.equal("ForwardTimeoutError");
      expect(ms, `${command.op} on the damaged shard took`).to.be.below(FORWARD_TIMEOUT_MS + 10_000);
    }

    // Repaired, the shard is taken and recovered without a restart, and its runs (the damaged one too) finish.
    await reviveEntry(name, at);
    await eventually(
      "the survivor to recover the repaired shard",
      async () => (await Promise.all(runs.map((id) => x.send<boolean>({ op: "holds", id })))).every(Boolean),
      60_000,
    );
    await finish(x, runs);
    await expectNoFatal(x);
    expect(rerunsAfterAck(cluster.steps()), "acknowledged steps executed again").to.deep.equal([]);
  });

  it("moves the shard between two processes that each fail to recover it, neither going fatal, until it is repaired", async () => {
    const [x, y, name] = await pair();
    await startWaitingRuns([x, y]);
    const { shard, runs } = await damageable(name, y);
    const at = await hideFirstEntry(name, shard, `${runs[0]}#1`);
    await y.kill();

    // Each failure doubles the wait before the survivor tries the shard again: after four, a process
    // that joins now finds the shard free and takes it.
    await eventually("the survivor to fail at the damaged shard four times", async () => (await givenUp(x, shard)).length >= 4, 45_000);
    const attempts = await givenUp(x, shard);
    for (let i = 1; i < 4; i++) {
      const backOff = (LEASE_MS / 3) * 2 ** (i - 1);
      expect(attempts[i]!.at - attempts[i - 1]!.at, `the wait before attempt ${i + 1}`).to.be.at.least(backOff * 0.9);
    }
    const z = await cluster.spawn(uniqueOwner("z"), name, ENV);
    await eventually("the process that joined to give the damaged shard up", async () => (await givenUp(z, shard)).length >= 1, 30_000);
    expect((await givenUp(z, shard))[0]!.message).to.match(/before its start record/);

    // Both carry on: every other run finishes, whichever process each is asked through.
    await eventually(
      "the processes to split the recoverable shards",
      async () => {
        const h = await holders(name);
        return h.filter((o) => o !== undefined).length >= SHARDS - 1 && h.includes(x.owner) && h.includes(z.owner);
      },
      30_000,
    );
    const rest = ids.filter((id) => !runs.includes(id));
    await Promise.all([
      finish(
        x,
        rest.filter((_, i) => i % 2 === 0),
      ),
      finish(
        z,
        rest.filter((_, i) => i % 2 === 1),
      ),
    ]);
    for (const w of [x, z]) {
      const { error } = await failingCall(w, { op: "signal", id: runs[1], by: "test" });
      expect(error.name, `a signal through ${w.owner}`).to.equal("ForwardTimeoutError");
    }

    await reviveEntry(name, at);
    await eventually(
      "a process to recover the repaired shard",
      async () => {
        const held = await Promise.all([x, z].map((w) => w.send<boolean>({ op: "holds", id: runs[0] })));
        return held.includes(true);
      },
      60_000,
    );
    await finish(x, runs);
    await expectNoFatal(x);
    await expectNoFatal(z);
    expect(rerunsAfterAck(cluster.steps()), "acknowledged steps executed again").to.deep.equal([]);
  });

  it("opens on a schema with a damaged shard, serving the other shards, and recovers that one once repaired", async () => {
    const name = schema();
    const w = await cluster.spawn(uniqueOwner("w"), name, ENV);
    await eventually("the first process to hold every shard", async () => (await holders(name)).every((o) => o === w.owner), 20_000);
    await startWaitingRuns([w]);
    const { shard, runs } = await damageable(name, w);
    const at = await hideFirstEntry(name, shard, `${runs[0]}#1`);
    await w.kill();
    await eventually("the dead process's leases to run out", async () => (await holders(name)).every((o) => o === undefined), 20_000);

    // The next process takes every shard as it opens; the open succeeds, without the damaged shard.
    const x = await cluster.spawn(uniqueOwner("x"), name, ENV);
    await eventually("the new process to give the damaged shard up", async () => (await givenUp(x, shard)).length >= 1, 30_000);
    expect((await givenUp(x, shard))[0]!.message).to.match(/before its start record/);
    const rest = ids.filter((id) => !runs.includes(id));
    await eventually(
      "the new process to recover the other shards",
      async () => (await Promise.all(rest.map((id) => x.send<boolean>({ op: "holds", id })))).every(Boolean),
      30_000,
    );
    await finish(x, rest);
    const { error } = await failingCall(x, { op: "status", id: runs[1] });
    expect(error.name).to.equal("ForwardTimeoutError");

    await reviveEntry(name, at);
    await eventually(
      "the new process to recover the repaired shard",
      async () => (await Promise.all(runs.map((id) => x.send<boolean>({ op: "holds", id })))).every(Boolean),
      60_000,
    );
    await finish(x, runs);
    await expectNoFatal(x);
  });
});
