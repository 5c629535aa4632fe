import { singleSimulation } from "./explore.js";
import { PROPERTIES, type Property } from "./properties.js";
import type { Schedule } from "./program.js";
import { loadRegressions, REGRESSIONS_DIR } from "./regressions.js";
import { FIRST_SEED, SEEDS, SHRINK_MS } from "./seeds.js";
import { describeRegressions, describeSeeds } from "./seed-suite.js";

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

describeSeeds("the engine under a deterministic simulation of workflows, client calls and disk faults", singleSimulation(), {
  first: FIRST_SEED,
  seeds: SEEDS,
  msPerSeed: 1_000,
  shrinkMs: SHRINK_MS,
  specs: SPECS,
  sameSeed: FIRST_SEED + 7,
});

describeRegressions(
  "schedules that once broke a property (test/simulation/regressions)",
  singleSimulation(),
  loadRegressions<Schedule, Property>(REGRESSIONS_DIR, PROPERTIES),
  SPECS,
);
