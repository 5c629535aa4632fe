import "reflect-metadata";
import { expect } from "chai";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import type { CatchUp } from "../../src/engine/schedule-spec.js";
import type { ScheduleDescription } from "../../src/journal/schedule-state.js";
import { DataDirReader } from "../../src/replay/data-dir-reader.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { eventually } from "../runtime/harness.js";
import { MemoryFileLayer, Random } from "../storage/support/memory-file-layer.js";

@Workflow("snapshot-report")
class Report {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    return this.ctx.workflowId;
  }
}

const HOUR = 3_600_000;
const T0 = Date.UTC(2030, 0, 1);
/** More records than a generation of a schedule's stream holds before it rolls to a snapshot. */
const ROLL = 520;

/** A data directory on a disk that can lose power, opened by engines on one virtual clock. */
class Machine {
  readonly clock = new VirtualClock(T0);
  disk = new MemoryFileLayer();

  constructor() {
    this.disk.mkdirDurable("/data");
  }

  open(): Promise<Engine> {
    return Engine.open(Config.local("/data").shards(2).clock(this.clock), { workflows: [Report], fileLayer: this.disk });
  }

  /** Cuts the power under `engine`: the next engine opens on what was durable. */
  async crash(engine: Engine): Promise<Engine> {
    const image = this.disk.crashImage(new Random(7));
    await engine.shutdown();
    this.disk = image;
    return this.open();
  }

  /** What a reader of the data directory finds now: the schedule `hourly` and the instants of its runs. */
  async read(): Promise<{ schedule: ScheduleDescription | undefined; instants: number[] }> {
    const reader = await DataDirReader.open("/data", { fileLayer: this.disk });
    try {
      const schedule = reader.schedules(this.clock.now()).find((s) => s.name === "hourly");
      return { schedule, instants: instantsOf(reader.list().map((r) => r.id)) };
    } finally {
      await reader.close();
    }
  }
}

/**
 * A schedule's account without `running`: the engine drops from it the runs it sees ended, while a
 * reader lists the runs the schedule last recorded as unfinished.
 */
function account(d: ScheduleDescription | undefined): Omit<ScheduleDescription, "running"> | undefined {
  if (d === undefined) return undefined;
  const { running: _, ...rest } = d;
  return rest;
}

/** The instants of the runs of schedule `hourly` among `ids`, in order. */
function instantsOf(ids: readonly string[]): number[] {
  return ids
    .filter((id) => id.startsWith("hourly@"))
    .map((id) => Number(id.slice("hourly@".length)))
    .sort((a, b) => a - b);
}

async function instants(engine: Engine): Promise<number[]> {
  return instantsOf((await engine.list(1_000)).map((r) => r.id));
}

/** Waits until the schedule's catch-up is over and its runs ended. */
async function settled(engine: Engine, runs: number): Promise<void> {
  await eventually(
    `${runs} finished runs and no backfill under way`,
    async () =>
      (await engine.getSchedule("hourly").describe()).backfills.length === 0 &&
      (await engine.list(1_000)).filter((r) => r.status === "ok").length >= runs,
  );
}

/**
 * An hourly schedule runs its first instant, its engine is down three hours, and the engine that
 * opens next is stopped before it caught up, with the pause recorded (and, if `roll`, the stream
 * rolled to a snapshot after it). Returns the machine, two hours on.
 */
async function pausedBeforeCatchUp(catchUp: CatchUp, roll: boolean): Promise<Machine> {
  const m = new Machine();
  const first = await m.open();
  await first.schedule("hourly", { workflow: Report, every: "1h", catchUp });
  await m.clock.advance("1h");
  await settled(first, 1);
  await first.shutdown();
  await m.clock.advance(3 * HOUR);

  const second = await m.open();
  const schedule = second.getSchedule("hourly");
  // Backfills of a span holding no instant: records that start nothing, enough to roll the stream.
  const writes = [schedule.pause(), ...(roll ? Array.from({ length: ROLL }, () => schedule.backfill(T0 + HOUR + 1, T0 + HOUR + 2)) : [])];
  await second.shutdown();
  await Promise.allSettled(writes);
  const stopped = await m.read();
  expect(stopped.instants, "runs when the second engine stopped").to.deep.equal([T0 + HOUR]);
  expect([stopped.schedule?.paused, stopped.schedule?.started], "the schedule when the second engine stopped").to.deep.equal([true, 1]);
  await m.clock.advance(2 * HOUR);
  return m;
}

describe("a schedule paused after its holder missed instants, across a snapshot of its stream", () => {
  it("catches up, after its stream rolled to a snapshot, the instants missed before the pause, and none after", async () => {
    const m = await pausedBeforeCatchUp("all", true);
    const engine = await m.open();
    try {
      await settled(engine, 4);
      expect(await instants(engine)).to.deep.equal([1, 2, 3, 4].map((h) => T0 + h * HOUR));
      const d = await engine.getSchedule("hourly").describe();
      expect([d.paused, d.started, d.skipped]).to.deep.equal([true, 4, 0]);
      expect(account((await m.read()).schedule), "the data directory's account").to.deep.equal(account(d));
    } finally {
      await engine.shutdown();
    }
  });

  for (const catchUp of ["all", "one"] as const)
    it(`keeps, through a snapshot an update made while paused and a crash, what catchUp '${catchUp}' did with the instants missed before the pause`, async () => {
      const m = await pausedBeforeCatchUp(catchUp, false);
      let engine = await m.open();
      try {
        await engine.schedule("hourly", { workflow: Report, every: "1h", catchUp, input: "changed" });
        engine = await m.crash(engine);
        const expected = catchUp === "all" ? [1, 2, 3, 4] : [1, 4];
        await settled(engine, expected.length);
        expect(await instants(engine)).to.deep.equal(expected.map((h) => T0 + h * HOUR));
        const d = await engine.getSchedule("hourly").describe();
        expect([d.paused, d.started, d.skipped]).to.deep.equal([true, expected.length, 4 - expected.length]);
        await m.clock.advance("3h");
        expect(await instants(engine), "no instant after the pause").to.deep.equal(expected.map((h) => T0 + h * HOUR));
        expect(account((await m.read()).schedule), "the data directory's account").to.deep.equal(
          account(await engine.getSchedule("hourly").describe()),
        );
      } finally {
        await engine.shutdown();
      }
    });
});
