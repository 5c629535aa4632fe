import { expect } from "chai";
import { flowShrunkText, replayFlow, scanFlowSeed, shrinkFlow } from "./flow-explore.js";
import { FLOW_REGRESSIONS_DIR, loadRegressions } from "../regressions.js";
import type { FlowPlan } from "./flow-plan.js";
import { FLOW_PROPERTIES, type FlowProperty } from "./flow-properties.js";
import { runFlowPlan } from "./flow-sim.js";

// Seeds checked on every test run, the same plans each time: a failure here reproduces with
// `npm run sim -- --flows --seed S --path P`; `npm run sim -- --flows --seeds N` checks more.
const FIRST_SEED = 1;
const SEEDS = 60;
// Time to shrink the first counterexample of a property that fails.
const SHRINK_MS = 10_000;

describe("schedules, limits, batches, debounced starts and completion tokens under a deterministic simulation with disk faults", function () {
  this.timeout(SEEDS * 2_000 + Object.keys(FLOW_PROPERTIES).length * (SHRINK_MS + 5_000));

  const first = new Map<FlowProperty, { seed: number; message: string; count: number }>();
  const crashes: string[] = [];

  before(async () => {
    for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
      const outcome = await scanFlowSeed(seed);
      if (outcome.crash !== undefined)
        crashes.push(`seed ${seed}: ${outcome.crash instanceof Error ? outcome.crash.stack : String(outcome.crash)}`);
      for (const v of outcome.violations) {
        const seen = first.get(v.property);
        if (seen === undefined) first.set(v.property, { seed, message: v.message, count: 1 });
        else seen.count++;
      }
    }
  });

  it(`runs ${SEEDS} generated plans without a failure of the harness itself`, () => {
    expect(crashes, crashes.join("\n\n")).to.deep.equal([]);
  });

  for (const property of Object.keys(FLOW_PROPERTIES) as FlowProperty[]) {
    it(FLOW_PROPERTIES[property], async () => {
      const found = first.get(property);
      if (found === undefined) return;
      const shrunk = await shrinkFlow(found.seed, property, SHRINK_MS);
      const summary = `${found.count} of ${SEEDS} plans fail; the first, seed ${found.seed}: ${found.message}`;
      throw new Error(shrunk === undefined ? summary : `${summary}\n\nshrunk:\n${flowShrunkText(shrunk)}`);
    });
  }

  it("runs one plan the same way every time", async () => {
    const seed = FIRST_SEED + 3;
    const a = await replayFlow(seed, undefined, undefined);
    const b = await replayFlow(seed, undefined, undefined);
    expect(b.plan).to.deep.equal(a.plan);
    expect(b.report?.trace ?? [], "the second run's trace").to.deep.equal(a.report?.trace ?? []);
    expect((a.report?.trace.length ?? 0) > a.plan.actions.length, "the trace records the actions").to.equal(true);
  });
});

describe("flow plans that once broke a property (test/simulation/regressions/flows)", function () {
  this.timeout(60_000);
  for (const [name, r] of loadRegressions<FlowPlan, FlowProperty>(FLOW_REGRESSIONS_DIR, FLOW_PROPERTIES)) {
    it(`${name}: ${FLOW_PROPERTIES[r.property]}`, async () => {
      const report = await runFlowPlan(r.schedule, { only: r.property }).catch((e: unknown) => e);
      const violations =
        report instanceof Error ? [report.message] : (report as Awaited<ReturnType<typeof runFlowPlan>>).violations.map((v) => v.message);
      expect(violations, `once found: ${r.found}`).to.deep.equal([]);
    });
  }
});
