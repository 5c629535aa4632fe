import "reflect-metadata";
import { expect } from "chai";
import { CancelledError } from "../../src/core/errors.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { MemoryFileLayer, Random } from "../storage/support/memory-file-layer.js";

@Workflow()
class Label {
  constructor(private readonly ctx: Ctx) {}

  async run(parcel: string): Promise<string> {
    if (parcel === "forever") await this.ctx.waitFor("never");
    return this.ctx.step("print", async () => `label for ${parcel}`);
  }
}

@Workflow()
class Parcel {
  constructor(private readonly ctx: Ctx) {}

  async run(parcel: string): Promise<string> {
    const label = await this.ctx.executeChild(Label, `label-${parcel}`, parcel);
    await this.ctx.step("ship", async () => true);
    return `shipped with ${label}`;
  }
}

/** Starts a child that waits forever and ends at once: its close policy (terminate) ends the child. */
@Workflow()
class Impatient {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    await this.ctx.startChild(Label, "label-forever", "forever");
    return "gone";
  }
}

/** A child that takes its first cancellation as a cue to tidy up, then waits on: a second one would show. */
@Workflow()
class Tidy {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<void> {
    try {
      await this.ctx.waitFor("never");
    } catch (e) {
      if (!(e instanceof CancelledError)) throw e;
      await this.ctx.step("tidy", async () => true);
      await this.ctx.waitFor("never");
    }
  }
}

/** Starts child `tidy-<round>` that its end asks to cancel; round 2 then waits, any other ends. */
@Workflow()
class Round {
  constructor(private readonly ctx: Ctx) {}

  async run(round: number): Promise<number> {
    await this.ctx.startChild(Tidy, `tidy-${round}`, undefined, { close: "request-cancel" });
    if (round === 2) await this.ctx.waitFor("never");
    return round;
  }
}

const open = (disk: MemoryFileLayer): Promise<Engine> =>
  Engine.open(
    Config.local("/data")
      .shards(2)
      .cache(1)
      .segmentBytes(64 * 1024),
    { workflows: [Parcel, Label, Impatient, Round, Tidy], fileLayer: disk },
  );

/**
 * Runs `work` on a fresh disk, then again once per file operation it made, taking the image a power
 * loss at that operation would leave, and calls `check` on an engine opened on each image.
 */
async function crashSweep(
  work: (engine: Engine) => Promise<void>,
  check: (engine: Engine, where: string) => Promise<void>,
): Promise<number> {
  let points = 0;
  for (let crashAt = 0; ; crashAt++) {
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    const engine = await open(disk);
    const base = disk.ops;
    let image: MemoryFileLayer | undefined;
    disk.onOp = (n) => {
      if (n === base + crashAt) image = disk.crashImage(new Random(crashAt));
    };
    await work(engine);
    disk.onOp = undefined;
    const ops = disk.ops - base;
    await engine.shutdown();
    if (crashAt > ops) return points;
    if (image === undefined) continue;
    points++;
    const reopened = await open(image);
    try {
      await check(reopened, `power loss at operation ${crashAt} of ${ops}`);
    } finally {
      await reopened.shutdown();
    }
  }
}

describe("a parent and its child, crashed at every point", function () {
  this.timeout(60_000);

  it("finishes after the restart with exactly one run of its child, never failing on the child's ID", async () => {
    let childBeforeItsRecord = 0;
    const points = await crashSweep(
      async (engine) => void (await (await engine.start(Parcel, "p-1", "p-1")).result()),
      async (engine, where) => {
        if ((await engine.status("p-1")) === undefined) return;
        const recorded = (await engine.describe("p-1"))!.journal.some((r) => r.kind === "child");
        if (!recorded && (await engine.status("label-p-1")) !== undefined) childBeforeItsRecord++;
        expect(await engine.run("p-1").result(), where).to.equal("shipped with label for p-1");
        expect((await engine.status("label-p-1"))?.runId, `${where}: one run of the child`).to.equal(1);
        const journal = (await engine.describe("p-1"))!.journal.map((r) => r.kind);
        expect(
          journal.filter((k) => k === "child-result"),
          `${where}: ${journal.join(", ")}`,
        ).to.have.length(1);
      },
    );
    expect(points).to.be.greaterThan(5);
    expect(childBeforeItsRecord, "crash points between the child's start and the parent's record of it").to.be.greaterThan(0);
  });

  it("terminates the child of a parent that ended, also when the power went before the termination was durable", async () => {
    let endedBeforeTheClose = 0;
    await crashSweep(
      async (engine) => {
        await (await engine.start(Impatient, "impatient-1", undefined)).result();
        await engine.idle();
      },
      async (engine, where) => {
        const parent = await engine.status("impatient-1");
        if (parent?.status !== "ok") return;
        if ((await engine.status("label-forever"))?.status !== "terminated") endedBeforeTheClose++;
        await engine.idle();
        expect((await engine.status("label-forever"))?.status, where).to.equal("terminated");
      },
    );
    expect(endedBeforeTheClose, "crash points between the parent's end and its child's termination").to.be.greaterThan(0);
  });

  /** How many times `id` was asked to cancel, and how many times it tidied up. */
  const cancels = async (engine: Engine, id: string): Promise<{ asked: number; tidied: number }> => {
    const journal = (await engine.describe(id))?.journal ?? [];
    return {
      asked: journal.filter((r) => r.kind === "cancel").length,
      tidied: journal.filter((r) => r.kind === "step" && r.name === "tidy").length,
    };
  };

  it("asks the children of runs that new starts replaced to cancel once, wherever the power went", async () => {
    let replaced = 0;
    await crashSweep(
      async (engine) => {
        // "round" and "tidy-2" lie on different shards, as do "again" and "tidy-4".
        await engine.start(Round, "round", 2);
        await engine.idle();
        await (await engine.start(Round, "round", 3, { idPolicy: { running: "terminate-existing" } })).result();
        // Round 4 ends at once, asking its child to cancel; round 5 replaces it straight away.
        await (await engine.start(Round, "again", 4)).result();
        await (await engine.start(Round, "again", 5)).result();
        await engine.idle();
      },
      async (engine, where) => {
        await engine.idle();
        for (const [parent, child] of [
          ["round", "tidy-2"],
          ["again", "tidy-4"],
        ] as const) {
          if ((await engine.status(parent))?.runId !== 2) continue;
          replaced++;
          expect(await cancels(engine, child), `${where}: ${child}`).to.deep.equal({ asked: 1, tidied: 1 });
        }
      },
    );
    expect(replaced, "crash points after a new start replaced a parent").to.be.greaterThan(10);
  });

  it("asks the child of a run a new start replaced to cancel when the new start was durable first", async () => {
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    const engine = await open(disk);
    await engine.start(Round, "round", 2);
    await engine.idle();
    // "tidy-2" lies on shard 0, "round" on shard 1: nothing written to shard 0 from here on survives.
    disk.skipSyncs = (file) => file.includes("shard-0000");
    await (await engine.start(Round, "round", 3, { idPolicy: { running: "terminate-existing" } })).status();
    await engine.idle();
    const image = disk.crashImage(new Random(7), (file) => (file.includes("shard-0000") ? "old" : "new"));
    await engine.shutdown();
    const reopened = await open(image);
    try {
      expect((await reopened.status("round"))?.runId, "the new start survived").to.equal(2);
      expect((await reopened.status("tidy-2"))?.status, "the child's cancellation did not").to.equal("running");
      await reopened.idle();
      expect(await cancels(reopened, "tidy-2")).to.deep.equal({ asked: 1, tidied: 1 });
    } finally {
      await reopened.shutdown();
    }
  });

  it("asks the child of a parent that ended to cancel once, however often the engine opens again", async () => {
    const disk = new MemoryFileLayer();
    disk.mkdirDurable("/data");
    let engine = await open(disk);
    await (await engine.start(Round, "ended", 3)).result();
    await engine.idle();
    for (let opening = 0; opening < 3; opening++) {
      expect(await cancels(engine, "tidy-3"), `opening ${opening}`).to.deep.equal({ asked: 1, tidied: 1 });
      await engine.shutdown();
      engine = await open(disk);
      await engine.idle();
    }
    await engine.shutdown();
  });
});
