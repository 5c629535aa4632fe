import "reflect-metadata";
import { expect } from "chai";
import { ForwardTimeoutError, StorageError } from "../../src/core/errors.js";
import type { ScheduleStateRecord } from "../../src/journal/system-records.js";
import { scheduleHarness, T0 } from "./fixtures/schedule-harness.js";

/**
 * A holder of the schedule's shard recorded a trigger's instant as being started and stopped before
 * it recorded the start; the next holder finishes that start. Its first attempt fails (the run's
 * shard is another process's, and the call to it was cut short), so it is tried again after the
 * catch-up of the instants missed while down has covered the triggered instant, and while a run of
 * the schedule is going.
 */
function recoveredTrigger(start: (id: string) => Promise<void>) {
  const triggered = T0 + 2_500;
  const h = scheduleHarness({ active: ["elsewhere"], start, settings: { overlap: "skip", catchUp: "one" } });
  h.schedule.apply({ kind: "schedule-tick", at: T0 + 2_500, instant: triggered, outcome: "triggering", source: "trigger" });
  return { ...h, triggered, id: `s@${triggered}` };
}

async function settle(h: ReturnType<typeof recoveredTrigger>): Promise<void> {
  for (let i = 0; i < 6; i++) {
    await h.letReadsGo();
    await h.clock.advance(10_000);
  }
  await h.letReadsGo();
}

describe("a trigger a stopped holder recorded, finished by the shard's next holder", () => {
  it("starts the triggered instant's run and counts it, though catch-up covered the instant and another run is going", async () => {
    let failures = 1;
    const h = recoveredTrigger(async () => {
      if (failures-- > 0) throw new StorageError("the run's shard did not answer", { shard: 3 });
    });
    h.schedule.open();
    await settle(h);
    expect(h.started, "the triggered instant's run").to.include(h.id);
    const ticks = h.appended
      .filter((r) => r.kind === "schedule-tick" && r.instant === h.triggered)
      .map((r) => (r as { outcome: string }).outcome);
    expect(ticks, "the trigger's decision was taken before the stop: its instant is started, not skipped").to.deep.equal(["started"]);
    expect(h.schedule.describe().recentRuns).to.include(h.id);
    expect(h.failed).to.deep.equal([]);
  });

  it("counts a run the stopped holder had started before its record, once", async () => {
    let failures = 1;
    const h = recoveredTrigger(async () => {
      if (failures-- > 0) throw new StorageError("the run's shard did not answer", { shard: 3 });
    });
    h.started.push(h.id);
    h.schedule.open();
    await settle(h);
    expect(h.started.filter((id) => id === h.id)).to.have.length(1);
    const startedTicks = h.appended.filter((r) => r.kind === "schedule-tick" && r.outcome === "started" && r.instant === h.triggered);
    expect(startedTicks, "the run is counted once").to.have.length(1);
    expect(h.schedule.describe().recentRuns).to.include(h.id);
  });
});

describe("a trigger on a holder whose clock is behind the instants an earlier holder dealt with", () => {
  const now = T0 + 5_500;

  async function triggerAfter(dealt: (h: ReturnType<typeof scheduleHarness>) => void) {
    const h = scheduleHarness({ settings: { overlap: "allow-all", catchUp: "one" } });
    dealt(h);
    h.schedule.open();
    await h.letReadsGo();
    const before = { runs: h.started.length, counted: h.schedule.describe().started };
    const trigger = h.schedule.trigger();
    await h.letReadsGo();
    await trigger;
    return { runs: h.started.length - before.runs, counted: h.schedule.describe().started - before.counted };
  }

  it("starts a run of its own when a run of the same instant was started", async () => {
    const triggered = await triggerAfter((h) => {
      h.started.push(`s@${now}`);
      h.schedule.apply({ kind: "schedule-tick", at: now, instant: now, outcome: "started", source: "trigger" });
    });
    expect(triggered, "the trigger's run, started and counted").to.deep.equal({ runs: 1, counted: 1 });
  });

  it("starts a run when its time lies in a span the earlier holder skipped", async () => {
    const triggered = await triggerAfter((h) =>
      h.schedule.apply({ kind: "schedule-skip", at: now + 3_000, from: T0 + 1_000, to: now + 1_499, count: 6 }),
    );
    expect(triggered, "the trigger's run, started and counted").to.deep.equal({ runs: 1, counted: 1 });
  });
});

describe("a holder that finds both a backfill under way and a run started without its record", () => {
  it("counts the run once: by the backfill's page, not again by adopting it", async () => {
    const h = scheduleHarness({ settings: { overlap: "allow-all", catchUp: "none" } });
    // The earlier holder asked for a backfill over the next instants and started the first instant's run.
    h.schedule.apply({ kind: "schedule-backfill", at: T0, id: "b", from: T0 + 1_000, to: T0 + 3_000, catchUp: false });
    h.started.push(`s@${T0 + 1_000}`);
    h.schedule.open();
    await h.letReadsGo();
    await h.clock.advance(1);
    await h.letReadsGo();
    const runs = h.started.filter((id) => id <= `s@${T0 + 3_000}`);
    expect(runs, "the backfill's runs").to.have.length(3);
    expect(h.schedule.describe().started, "each counted once").to.equal(3);
  });
});

describe("a holder whose wait for a running run's end fails (the run's process died, the call to it cut short)", () => {
  it("keeps the run as running and starts the buffered instant only once the run ended", async () => {
    const running = `s@${T0 + 4_000}`;
    let ended = false;
    const h = scheduleHarness({
      active: [running],
      settings: { overlap: "buffer-one", catchUp: "none", everyMs: 60_000 },
      awaitResult: () => (ended ? Promise.resolve() : Promise.reject(new ForwardTimeoutError("the run's owner did not answer"))),
    });
    h.schedule.apply({ kind: "schedule-tick", at: T0 + 4_500, instant: T0 + 4_500, outcome: "buffered", source: "live" });
    h.schedule.open();
    for (let i = 0; i < 3; i++) {
      await h.letReadsGo();
      await h.clock.advance(1_000);
    }
    await h.letReadsGo();
    expect(h.started, "no run beside the running one").to.deep.equal([]);
    ended = true;
    h.endRun(running);
    for (let i = 0; i < 3; i++) {
      await h.letReadsGo();
      await h.clock.advance(1_000);
    }
    await h.letReadsGo();
    expect(h.started, "the buffered instant, once the run ended").to.include(`s@${T0 + 4_500}`);
  });
});

describe("a run an earlier holder asked for just before it stopped, whose start was performed late", () => {
  it("is counted once it appears, though the catch-up after the takeover dealt with its instant", async () => {
    const h = scheduleHarness({ settings: { overlap: "allow-all", catchUp: "one", everyMs: 2_000 } });
    h.schedule.open();
    await h.letReadsGo();
    // The earlier holder's start of the first instant after the cursor is performed only now.
    h.started.push(`s@${T0 + 2_000}`);
    for (let i = 0; i < 40; i++) {
      await h.clock.advance(1_000);
      await h.letReadsGo();
    }
    expect(h.started).to.include(`s@${T0 + 4_000}`);
    expect(h.schedule.describe().started, "every run of the schedule counted").to.equal(h.started.length);
    expect(h.failed).to.deep.equal([]);
  });
});

describe("two backfills over the same instants (a backfill asked again after its first holder died)", () => {
  it("counts every run either started, when a start of one of them failed and is tried again", async () => {
    let failures = 1;
    const h = scheduleHarness({
      settings: { overlap: "allow-all", catchUp: "none" },
      start: async (id) => {
        if (id === `s@${T0 - 1_000}` && failures-- > 0) throw new StorageError("the run's shard did not answer", { shard: 2 });
      },
    });
    for (const id of ["b1", "b2"])
      h.schedule.apply({ kind: "schedule-backfill", at: T0, id, from: T0 - 3_000, to: T0 - 1_000, catchUp: false });
    h.schedule.open();
    for (let i = 0; i < 5; i++) {
      await h.letReadsGo();
      await h.clock.advance(1_000);
    }
    await h.letReadsGo();
    const backfilled = h.started.filter((id) => id < `s@${T0}`);
    expect(backfilled, "the backfill's runs").to.have.length(3);
    expect(h.schedule.describe().started, "each counted once").to.equal(h.started.length);
    expect(h.schedule.describe().backfills).to.deep.equal([]);
  });
});

describe("a run asked for before a takeover whose start is performed after the next holder let the shard go", () => {
  it("is counted by the holder after that one, which the catch-up's record tells to look for it", async () => {
    const h = scheduleHarness({ settings: { overlap: "allow-all", catchUp: "one", everyMs: 2_000 } });
    h.schedule.open();
    await h.letReadsGo();
    await h.clock.advance(500);
    await h.letReadsGo();
    const next = h.takeOver(h.schedule);
    next.open();
    h.started.push(`s@${T0 + 2_000}`);
    for (let i = 0; i < 40; i++) {
      await h.clock.advance(1_000);
      await h.letReadsGo();
    }
    expect(next.describe().started, "every run of the schedule counted").to.equal(h.started.length);
    expect(h.failed).to.deep.equal([]);
  });
});

describe("a holder that cannot read whether the recovered instant's run exists", () => {
  it("takes the run as possibly going, so under skip no run of a later instant starts beside it", async () => {
    const recovered = `s@${T0 + 1_000}`;
    const h = scheduleHarness({
      settings: { overlap: "skip", catchUp: "one" },
      statusFailures: { count: 1, error: () => new StorageError("the run's shard did not answer", { shard: 1 }) },
    });
    h.started.push(recovered);
    h.schedule.open();
    for (let i = 0; i < 3; i++) {
      await h.letReadsGo();
      await h.clock.advance(1_000);
    }
    await h.letReadsGo();
    expect(h.started, "no run beside the recovered instant's").to.deep.equal([recovered]);
    expect(h.schedule.describe().started, "the recovered instant's run counted once found").to.equal(1);
  });
});

describe("a schedule paused while the holder that opened it still reads the runs it recovered", () => {
  it("catches up the instants due before the pause, those that came during the reads too", async () => {
    const h = scheduleHarness({ settings: { overlap: "allow-all", catchUp: "all" } });
    h.schedule.open();
    await h.clock.advance(2_000);
    await h.schedule.pause();
    for (let i = 0; i < 5; i++) {
      await h.letReadsGo();
      await h.clock.advance(1_000);
    }
    const instants = h.started.map((id) => Number(id.slice(2)) - T0);
    expect(instants, "every instant up to the pause, none after").to.deep.equal([1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000]);
  });
});

describe("a holder that stopped with more than one instant's record unwritten", () => {
  it("counts the run of a later instant it started, not only of the first after the recovered cursor", async () => {
    const h = scheduleHarness({ settings: { overlap: "skip", catchUp: "one" } });
    // The first instant was skipped and the second started, and neither record was written.
    h.started.push(`s@${T0 + 2_000}`);
    h.schedule.open();
    for (let i = 0; i < 3; i++) {
      await h.letReadsGo();
      await h.clock.advance(1_000);
    }
    await h.letReadsGo();
    expect(h.schedule.describe().started, "every run of the schedule counted").to.equal(h.started.length);
  });
});

describe("a start of an instant that failed though it was performed (the call to the run's shard cut short after it)", () => {
  /** A schedule whose first start creates its run, then fails as a forward whose answer was lost does. */
  function performedThenFailed(overlap: "skip" | "buffer-one") {
    let first = true;
    const ends = new Map<string, () => void>();
    const h = scheduleHarness({
      settings: { overlap, catchUp: "one" },
      start: async (id) => {
        if (!first) return;
        first = false;
        performed.push(id);
        throw new ForwardTimeoutError("the run's owner did not answer in time");
      },
      awaitResult: (id) => new Promise<void>((resolve) => ends.set(id, resolve)),
    });
    const performed = h.started;
    const end = (id: string): void => {
      h.endRun(id);
      ends.get(id)?.();
    };
    return { ...h, end };
  }

  async function turns(h: { letReadsGo: () => Promise<void>; clock: { advance: (ms: number) => Promise<void> } }, n: number) {
    for (let i = 0; i < n; i++) {
      await h.letReadsGo();
      await h.clock.advance(250);
    }
    await h.letReadsGo();
  }

  it("takes its run for going under buffer-one: the next instant waits for it, and it is counted once", async () => {
    const h = performedThenFailed("buffer-one");
    h.schedule.open();
    // The catch-up's instant, T0 + 5 s, is started and its start fails; T0 + 6 s falls due while its run goes on.
    await turns(h, 4);
    expect(h.started, "no run beside the one whose start failed").to.deep.equal([`s@${T0 + 5_000}`]);
    await turns(h, 8);
    expect(h.schedule.describe().started, "the run whose start failed, counted when its start is tried again").to.equal(1);
    h.end(`s@${T0 + 5_000}`);
    await turns(h, 2);
    expect(h.started, "the buffered instant, once the run ended").to.deep.equal([`s@${T0 + 5_000}`, `s@${T0 + 6_000}`]);
    expect(h.schedule.describe().started).to.equal(2);
    expect(h.failed).to.deep.equal([]);
  });

  it("takes its run for going under skip: the instants while it goes on are skipped", async () => {
    const h = performedThenFailed("skip");
    h.schedule.open();
    await turns(h, 12);
    expect(h.started, "no run beside the one whose start failed").to.deep.equal([`s@${T0 + 5_000}`]);
    expect(h.schedule.describe().started).to.equal(1);
    h.end(`s@${T0 + 5_000}`);
    await turns(h, 6);
    expect(h.started.length, "the next instant's run once it ended").to.equal(2);
    expect(h.schedule.describe().started).to.equal(2);
  });
});

describe("a trigger another process forwarded, asked again of the shard's next holder (the first performed it and died before answering)", () => {
  it("is found performed, by its request, and starts nothing more", async () => {
    const h = scheduleHarness({ settings: { overlap: "allow-all", catchUp: "none" } });
    h.schedule.open();
    await h.letReadsGo();
    await h.schedule.trigger("request-1");
    const next = h.takeOver(h.schedule);
    next.open();
    await h.letReadsGo();
    for (const request of ["request-1", "request-2"]) {
      const triggered = next.trigger(request);
      await h.letReadsGo();
      await triggered;
    }
    expect(h.started, "one run per request").to.have.length(2);
    expect(next.describe().started).to.equal(2);
  });

  it("is found performed after the schedule's state was rolled into a snapshot", async () => {
    const h = scheduleHarness({ settings: { overlap: "allow-all", catchUp: "none" } });
    h.schedule.open();
    await h.letReadsGo();
    await h.schedule.trigger("request-1");
    const snapshot = (h.schedule as unknown as { snapshotRecord(at: number): ScheduleStateRecord }).snapshotRecord(T0 + 6_000);
    const next = scheduleHarness({ settings: { overlap: "allow-all", catchUp: "none" }, state: snapshot });
    next.schedule.open();
    await next.letReadsGo();
    const triggered = next.schedule.trigger("request-1");
    await next.letReadsGo();
    await triggered;
    expect(next.started, "no run for the request already performed").to.deep.equal([]);
  });
});
