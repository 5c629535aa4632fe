import { FLOW_REGRESSIONS_DIR, loadRegressions } from "../regressions.js";
import { describeRegressions, describeSeeds } from "../seed-suite.js";
import { FLOWS } from "./flow-explore.js";
import type { FlowPlan } from "./flow-plan.js";
import { FLOW_PROPERTIES, type FlowProperty } from "./flow-properties.js";

// Seeds checked on every test run, the same plans each time: a failure here reproduces with
// `npm run sim -- --flows --seed S --path P`; `npm run sim -- --flows --seeds N` checks more.
describeSeeds(
  "schedules, limits, batches, debounced starts, completion tokens and retention under a deterministic simulation with disk faults",
  FLOWS,
  { first: 1, seeds: 60, msPerSeed: 2_000, shrinkMs: 10_000, specs: FLOW_PROPERTIES, sameSeed: 4 },
);

describeRegressions(
  "flow plans that once broke a property (test/simulation/regressions/flows)",
  FLOWS,
  loadRegressions<FlowPlan, FlowProperty>(FLOW_REGRESSIONS_DIR, FLOW_PROPERTIES),
  FLOW_PROPERTIES,
);
