import { expect } from "chai";
import { SYSTEM_STREAM_PREFIX, shardOf } from "../../src/core/ids.js";
import { type ClusterWorker, holders, rerunsAfterAck, useClusterPair } from "./support/cluster.js";
import { useSchemas } from "./support/database.js";
import { eventually, sleep } from "../support/wait.js";

const SHARDS = 8;
const LEASE_MS = 1_000;

describe("Engines of a cluster sharing one PostgreSQL schema (real processes)", function () {
  this.timeout(60_000);
  const schema = useSchemas();
  const cluster = useClusterPair(schema, { shards: SHARDS, leaseMs: LEASE_MS });

  const steps = cluster.steps;

  it("completes runs started from either process and delivers a signal sent to the process that does not own the run", async () => {
    const [a, b, name] = await cluster.start();
    const owners = await holders(name);
    const ids = Array.from({ length: 16 }, (_, i) => `job-${i}`);
    const ownerOf = (id: string): string => owners[shardOf(id, SHARDS)] as string;
    expect(new Set(ids.map(ownerOf))).to.deep.equal(new Set(["A", "B"]));
    for (const id of ids) expect(await a.send<boolean>({ op: "holds", id }), id).to.equal(ownerOf(id) === "A");
    // Each run is started and signalled through the process that does not own it.
    const via = (id: string): ClusterWorker => (ownerOf(id) === "A" ? b : a);
    await Promise.all(ids.map((id, i) => via(id).send({ op: "start", id, input: { n: i * 10, wait: true, stepMs: 5 } })));
    await eventually(
      "every run to wait for its signal",
      async () => {
        const statuses = await Promise.all(ids.map((id) => via(id).send<{ status: string } | null>({ op: "status", id })));
        return statuses.every((s) => s?.status === "suspended");
      },
      20_000,
    );
    await Promise.all(ids.map((id) => via(id).send({ op: "signal", id, by: via(id).owner })));
    const results = await Promise.all(ids.map((id) => via(id).send<string>({ op: "result", id })));
    expect(results).to.deep.equal(ids.map((id, i) => `${i * 10 + 10} by ${via(id).owner}`));
    // Every step ran in the process that owns its run, once.
    const execs = steps().filter((l) => l.startsWith("exec "));
    expect(execs).to.have.length(ids.length * 4);
    for (const l of execs) {
      const [, id, , owner] = l.split(" ") as [string, string, string, string];
      expect(owner, l).to.equal(ownerOf(id));
    }
    // An operation on a run of no ID reaches the owner and comes back as the owner's error class.
    const missing = ids.map((_, i) => `none-${i}`).find((id) => ownerOf(id) === "B") as string;
    const err = await a.send({ op: "signal", id: missing, by: "A" }).catch((e: Error) => e);
    expect((err as Error).name).to.equal("NotFoundError");
    expect((err as Error).message).to.contain(`'${missing}'`);
  });

  it("delivers messages from workflow code to a run in another process's shard: start, signal and update", async () => {
    const [a, , name] = await cluster.start();
    const owners = await holders(name);
    const onA = (prefix: string): string =>
      Array.from({ length: 64 }, (_, i) => `${prefix}-${i}`).find((id) => owners[shardOf(id, SHARDS)] === "A") as string;
    const onB = (prefix: string): string =>
      Array.from({ length: 64 }, (_, i) => `${prefix}-${i}`).find((id) => owners[shardOf(id, SHARDS)] === "B") as string;
    const messenger = onA("messenger");
    const target = onB("target");
    await a.send({ op: "startType", type: "cluster-messenger", id: messenger, input: target });
    await eventually(
      "the messenger's update to be accepted",
      async () => {
        const journal = await a.send<{ kinds: string[] } | null>({ op: "journal", id: target });
        return journal?.kinds.includes("update") === true;
      },
      20_000,
    );
    await a.send({ op: "startType", type: "cluster-signaller", id: onA("signaller"), input: target });
    expect(await a.send<string>({ op: "result", id: messenger })).to.equal("updated after signaller on A");
    expect(await a.send<string>({ op: "result", id: target })).to.equal("11 by signaller on A");
    // The target ran where its shard is held, and got each message once.
    expect(
      steps()
        .filter((l) => l.startsWith(`exec ${target} `))
        .every((l) => l.endsWith(" B")),
      "the target ran on B",
    ).to.equal(true);
    const journal = await a.send<{ kinds: string[] }>({ op: "journal", id: target });
    expect(journal.kinds.filter((k) => k === "signal")).to.have.length(1);
    expect(journal.kinds.filter((k) => k === "update")).to.have.length(1);
  });

  it("lists the schedules of every process from either process", async () => {
    const [a, b, name] = await cluster.start();
    const owners = await holders(name);
    const names = Array.from({ length: 10 }, (_, i) => `sched-${i}`);
    expect(new Set(names.map((n) => owners[shardOf(`${SYSTEM_STREAM_PREFIX}schedule/${n}`, SHARDS)]))).to.deep.equal(new Set(["A", "B"]));
    for (const n of names)
      await a.send({ op: "schedule", name: n, spec: { workflow: "cluster-echo", every: "1h", overlap: "skip", paused: true } });
    for (const via of [a, b]) {
      expect(await via.send<string[]>({ op: "schedules" })).to.deep.equal(names.map((n) => `${n} paused`));
    }
  });

  it("lists the runs of every process's shards from either process, newest first and filtered", async () => {
    const [a, b, name] = await cluster.start();
    const owners = await holders(name);
    const ids = Array.from({ length: 12 }, (_, i) => `listed-${String(i).padStart(2, "0")}`);
    expect(new Set(ids.map((id) => owners[shardOf(id, SHARDS)]))).to.deep.equal(new Set(["A", "B"]));
    // Started one after another, so start times order them; the even ones wait for a signal.
    for (const [i, id] of ids.entries()) await a.send({ op: "start", id, input: { n: i, wait: i % 2 === 0, stepMs: 1 } });
    await eventually(
      "the odd runs to finish",
      async () => {
        const done = await b.send<string[]>({ op: "list", filter: { status: "ok" }, limit: 100 });
        return done.length === ids.length / 2;
      },
      20_000,
    );

    for (const via of [a, b]) {
      const all = await via.send<string[]>({ op: "list", filter: {}, limit: 100 });
      expect(all.map((l) => l.split(" ")[0])).to.deep.equal([...ids].reverse());
      const waiting = await via.send<string[]>({ op: "list", filter: { status: "suspended" }, limit: 100 });
      expect(waiting).to.deep.equal(
        ids
          .filter((_, i) => i % 2 === 0)
          .reverse()
          .map((id) => `${id} suspended`),
      );
      expect(await via.send<string[]>({ op: "list", filter: {}, limit: 3 })).to.have.length(3);
    }
  });

  it("runs a child in another process's shard, returns its result to the parent and applies the parent's close policy to it", async () => {
    const [a, b, name] = await cluster.start();
    const owners = await holders(name);
    const onA = (prefix: string): string =>
      Array.from({ length: 64 }, (_, i) => `${prefix}-${i}`).find((id) => owners[shardOf(id, SHARDS)] === "A") as string;
    const onB = (prefix: string): string =>
      Array.from({ length: 64 }, (_, i) => `${prefix}-${i}`).find((id) => owners[shardOf(id, SHARDS)] === "B") as string;

    const parent = onA("parent");
    const child = onB("child");
    await a.send({ op: "startType", type: "cluster-parent", id: parent, input: child });
    expect(await a.send<string>({ op: "result", id: parent })).to.equal("parent got 11");
    expect(
      steps()
        .filter((l) => l.startsWith(`exec ${child} `))
        .every((l) => l.endsWith(" B")),
      "the child ran on B",
    ).to.equal(true);
    const journal = await a.send<{ runId: number; kinds: string[] }>({ op: "journal", id: parent });
    expect(journal.kinds.filter((k) => k === "child-result")).to.have.length(1);

    const holder = onA("holder");
    const held = onB("held");
    await a.send({ op: "startType", type: "cluster-holder", id: holder, input: held });
    await eventually(
      "the child to wait on B",
      async () => (await b.send<{ status: string } | null>({ op: "status", id: held }))?.status === "suspended",
    );
    await a.send({ op: "terminate", id: holder });
    await eventually(
      "B to terminate the child",
      async () => (await b.send<{ status: string } | null>({ op: "status", id: held }))?.status === "terminated",
    );
  });

  it("gets a child's result to its parent when the child's process dies and the parent's process takes the child over", async () => {
    const [a, b, name] = await cluster.start();
    const owners = await holders(name);
    const parent = Array.from({ length: 64 }, (_, i) => `holder-${i}`).find((id) => owners[shardOf(id, SHARDS)] === "A") as string;
    const child = Array.from({ length: 64 }, (_, i) => `held-${i}`).find((id) => owners[shardOf(id, SHARDS)] === "B") as string;
    await a.send({ op: "startType", type: "cluster-parent-of-waiter", id: parent, input: child });
    await eventually(
      "the child to wait on B",
      async () => (await b.send<{ status: string } | null>({ op: "status", id: child }))?.status === "suspended",
    );
    await b.kill();
    await eventually("A to hold every shard", async () => (await holders(name)).every((o) => o === "A"), 10_000);
    await a.send({ op: "signal", id: child, by: "A" });
    expect(await a.send<string>({ op: "result", id: parent })).to.equal("parent got 11 by A");
    const journal = await a.send<{ runId: number; kinds: string[] }>({ op: "journal", id: parent });
    expect(journal.kinds.filter((k) => k === "child-result")).to.have.length(1);
  });

  it("hands shards with waiting runs to a process that joins, and the runs complete there", async () => {
    const name = schema();
    const a = await cluster.spawn("A", name);
    const ids = Array.from({ length: 16 }, (_, i) => `moved-${i}`);
    await Promise.all(ids.map((id, i) => a.send({ op: "start", id, input: { n: i, wait: true, stepMs: 5 } })));
    await eventually("every run to wait for its signal", async () => {
      const statuses = await Promise.all(ids.map((id) => a.send<{ status: string } | null>({ op: "status", id })));
      return statuses.every((s) => s?.status === "suspended");
    });
    // A waits for the results and for updates while the shards of half of the runs move to B.
    const results = Promise.all(ids.map((id) => a.send<string>({ op: "result", id })));
    const updates = Promise.all(ids.map((id) => a.send<string>({ op: "update", id, tag: `u-${id}` })));
    const b = await cluster.spawn("B", name);
    await eventually(
      "the shards to split evenly",
      async () => (await holders(name)).filter((o) => o === "B").length === SHARDS / 2,
      15_000,
    );
    const owners = await holders(name);
    await Promise.all(ids.map((id) => b.send({ op: "signal", id, by: "B" })));
    expect(await results).to.deep.equal(ids.map((_, i) => `${i + 10} by B`));
    expect(await updates).to.deep.equal(ids.map((id) => `u-${id} after B`));
    const lines = steps();
    expect(rerunsAfterAck(lines), "steps acknowledged before the move that ran again").to.deep.equal([]);
    // Steps 3 and 4 ran where the run's shard ended up.
    for (const l of lines.filter((x) => x.startsWith("exec ") && (x.includes(" s3 ") || x.includes(" s4 ")))) {
      const [, id, , owner] = l.split(" ") as [string, string, string, string];
      expect(owner, l).to.equal(owners[shardOf(id, SHARDS)]);
    }
  });

  it("takes over the shards of a SIGKILLed process within the lease time and completes every run without re-running an acknowledged step", async () => {
    const [a, b, name] = await cluster.start();
    const before = await holders(name);
    const ids = Array.from({ length: 24 }, (_, i) => `run-${i}`);
    await Promise.all(ids.map((id, i) => (i % 2 === 0 ? a : b).send({ op: "start", id, input: { n: i, wait: false, stepMs: 150 } })));
    // Results are awaited through A, forwarded to B for B's runs while B lives.
    const results = Promise.all(ids.map((id) => a.send<string>({ op: "result", id })));
    await eventually("B to run steps", () => steps().some((l) => l.startsWith("exec ") && l.endsWith(" B")));
    await sleep(200);
    await b.kill();
    const killedAt = Date.now();
    await eventually("A to hold every shard", async () => (await holders(name)).every((o) => o === "A"), 10_000);
    const takeover = Date.now() - killedAt;
    expect(takeover, "takeover time (ms)").to.be.below(LEASE_MS + 2_000);

    expect(await results).to.deep.equal(ids.map((_, i) => String(i + 10)));
    const lines = steps();
    expect(rerunsAfterAck(lines), "steps acknowledged before the kill that ran again").to.deep.equal([]);
    const acked = new Set(lines.filter((l) => l.startsWith("ack ")).map((l) => l.split(" ").slice(1, 3).join(" ")));
    expect(acked.size).to.equal(ids.length * 4);
    expect(
      lines.some((l) => l.startsWith("ack ") && l.endsWith(" B")),
      "B acknowledged steps before it died",
    ).to.equal(true);
    // Runs of B's shards went on in A after the kill.
    const ofB = new Set(ids.filter((id) => before[shardOf(id, SHARDS)] === "B"));
    expect(lines.some((l) => l.startsWith("exec ") && l.endsWith(" A") && ofB.has(l.split(" ")[1] as string))).to.equal(true);
  });

  it("refuses a terminate of a run that already ended, through the process that does not own it, with the owner's reason", async () => {
    const [a, b, name] = await cluster.start();
    const owners = await holders(name);
    const id = Array.from({ length: 64 }, (_, i) => `ended-${i}`).find((i) => owners[shardOf(i, SHARDS)] === "B") as string;
    await b.send({ op: "start", id, input: { n: 1, wait: true, stepMs: 5 } });
    await a.send({ op: "terminate", id });

    const refused = (await a.send({ op: "terminate", id }).catch((e: Error) => e)) as Error & { reason?: string };
    expect({ name: refused.name, reason: refused.reason }).to.deep.equal({ name: "RejectedError", reason: "already-finished" });
  });

  describe("a forwarded request whose owner dies after performing it and before answering", () => {
    /** An ID of a run on one of B's shards. */
    async function idOfB(name: string): Promise<string> {
      const owners = await holders(name);
      return Array.from({ length: 64 }, (_, i) => `once-${i}`).find((id) => owners[shardOf(id, SHARDS)] === "B") as string;
    }

    it("delivers a signal once: the next owner finds it in the journal and answers it", async () => {
      const [a, b, name] = await cluster.start({ FUSEE_TEST_CRASH_AFTER_PERFORM: "signal" });
      const id = await idOfB(name);
      await b.send({ op: "start", id, input: { n: 1, wait: true, stepMs: 5 } });
      await eventually(
        "the run to wait for its signal",
        async () => (await b.send<{ status: string } | null>({ op: "status", id }))?.status === "suspended",
      );

      await a.send({ op: "signal", id, by: "A" });
      expect(b.process.signalCode, "B killed itself after performing the signal").to.equal("SIGKILL");
      expect(await a.send<string>({ op: "result", id })).to.equal("11 by A");
      const journal = await a.send<{ runId: number; kinds: string[] }>({ op: "journal", id });
      expect(
        journal.kinds.filter((k) => k === "signal"),
        JSON.stringify(journal.kinds),
      ).to.have.length(1);
    });

    it("starts a run once: the caller gets its answer, not an AlreadyExistsError, and the ID has one run", async () => {
      const [a, b, name] = await cluster.start({ FUSEE_TEST_CRASH_AFTER_PERFORM: "start" });
      const id = await idOfB(name);
      await a.send({ op: "start", id, input: { n: 5, wait: false, stepMs: 5 } });
      expect(b.process.signalCode, "B killed itself after performing the start").to.equal("SIGKILL");
      expect(await a.send<string>({ op: "result", id })).to.equal("15");
      const journal = await a.send<{ runId: number; kinds: string[] }>({ op: "journal", id });
      expect(journal.runId).to.equal(1);
      expect(journal.kinds.filter((k) => k === "start")).to.have.length(1);
    });

    it("cancels a run once: the caller gets its answer, not a RejectedError for a run that already ended", async () => {
      const [a, b, name] = await cluster.start({ FUSEE_TEST_CRASH_AFTER_PERFORM: "cancel" });
      const id = await idOfB(name);
      await b.send({ op: "start", id, input: { n: 1, wait: true, stepMs: 5 } });
      await eventually(
        "the run to wait for its signal",
        async () => (await b.send<{ status: string } | null>({ op: "status", id }))?.status === "suspended",
      );

      await a.send({ op: "cancel", id });
      expect(b.process.signalCode, "B killed itself after performing the cancel").to.equal("SIGKILL");
      const error = await a.send({ op: "result", id }).catch((e: Error) => e);
      expect((error as Error).name).to.equal("CancelledError");
      const journal = await a.send<{ runId: number; kinds: string[] }>({ op: "journal", id });
      expect(journal.kinds.filter((k) => k === "cancel")).to.have.length(1);
    });
  });
});
