import { expect } from "chai";
import { replay, scanSeed, shrink, shrunkText } from "./explore.js";
import { PROPERTIES, type Property } from "./properties.js";
import type { Schedule } from "./program.js";
import { loadRegressions, REGRESSIONS_DIR } from "./regressions.js";
import { FIRST_SEED, SEEDS, SHRINK_MS } from "./seeds.js";
import { runSchedule } from "./simulator.js";

const SPECS: Record<Property, string> = {
  noRerun: "never runs a step body again once the step's result is durable",
  replays: "replays every journal it wrote with the same workflow classes",
  statusJournal: "reports the status its journal ends with, and ends a run that did not catch a cancellation otherwise than ok",
  results: "gives the results, errors and call outcomes the reference model predicts",
  runSet: "keeps every acknowledged run, invents none, and keeps finished runs finished",
  retryBudget: "never runs a step more often than its retry policy allows, across restarts and power losses",
  abortTold: "aborts the AbortSignal of a hanging step whose run is cancelled or terminated",
  stepKeys: "gives each step its own idempotency key",
  recovery: "opens every image a power loss leaves, refuses work after a failed sync, and answers every call",
  unhandled: "lets no rejection escape unhandled, even after a failed sync",
  exactlyOnce: "applies every acknowledged signal and update exactly once, across continue-as-new and reset",
  childResults: "journals a child's result only in the run of its parent that started it",
  closePolicy: "closes children by their policies when the parent's run ends, continues as new or is reset",
  attributes: "keeps search attributes and listWhere as the model computes them, across continue-as-new",
  readers: "shows the data-directory reader the runs, statuses and attributes the engine shows",
};

describe("the engine under a deterministic simulation of workflows, client calls and disk faults", function () {
  this.timeout(SEEDS * 1_000 + Object.keys(PROPERTIES).length * (SHRINK_MS + 5_000));

  const first = new Map<Property, { seed: number; message: string; count: number }>();
  const crashes: string[] = [];

  before(async () => {
    for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
      const outcome = await scanSeed(seed);
      if (outcome.crash !== undefined)
        crashes.push(`seed ${seed}: ${outcome.crash instanceof Error ? outcome.crash.stack : String(outcome.crash)}`);
      for (const v of outcome.violations) {
        const seen = first.get(v.property);
        if (seen === undefined) first.set(v.property, { seed, message: v.message, count: 1 });
        else seen.count++;
      }
    }
  });

  it(`runs ${SEEDS} generated schedules without a failure of the harness itself`, () => {
    expect(crashes, crashes.join("\n\n")).to.deep.equal([]);
  });

  for (const property of Object.keys(PROPERTIES) as Property[]) {
    it(SPECS[property], async () => {
      const found = first.get(property);
      if (found === undefined) return;
      const shrunk = await shrink(found.seed, property, SHRINK_MS);
      const summary = `${found.count} of ${SEEDS} schedules fail; the first, seed ${found.seed}: ${found.message}`;
      throw new Error(shrunk === undefined ? summary : `${summary}\n\nshrunk:\n${shrunkText(shrunk)}`);
    });
  }

  it("runs one seed the same way every time", async () => {
    const seed = FIRST_SEED + 7;
    const a = await replay(seed, undefined, undefined);
    const b = await replay(seed, undefined, undefined);
    expect(b.schedule).to.deep.equal(a.schedule);
    expect(b.report?.trace ?? [], "the second run's trace").to.deep.equal(a.report?.trace ?? []);
    expect((a.report?.trace.length ?? 0) > a.schedule.actions.length, "the trace records the actions").to.equal(true);
  });
});

describe("schedules that once broke a property (test/simulation/regressions)", function () {
  this.timeout(60_000);
  for (const [name, r] of loadRegressions<Schedule, Property>(REGRESSIONS_DIR, PROPERTIES)) {
    it(`${name}: ${SPECS[r.property]}`, async () => {
      const report = await runSchedule(r.schedule, { only: r.property }).catch((e: unknown) => e);
      const violations =
        report instanceof Error ? [report.message] : (report as Awaited<ReturnType<typeof runSchedule>>).violations.map((v) => v.message);
      expect(violations, `once found: ${r.found}`).to.deep.equal([]);
    });
  }
});
