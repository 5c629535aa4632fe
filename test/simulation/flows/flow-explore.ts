import type { Simulation } from "../seed-scanner.js";
import { flowPlanArbitrary, flowPlanText, type FlowPlan } from "./flow-plan.js";
import { FLOW_PROPERTIES, FlowViolation, type FlowProperty } from "./flow-properties.js";
import { runFlowPlan } from "./flow-sim.js";

/** The flows simulation, for the seed scanner. */
export const FLOWS: Simulation<FlowPlan, FlowProperty> = {
  noun: "flow plan",
  properties: FLOW_PROPERTIES,
  arbitrary: flowPlanArbitrary,
  run: runFlowPlan,
  isViolation: (e): e is FlowViolation => e instanceof FlowViolation,
  actions: (p) => p.actions.length,
  text: flowPlanText,
  reproduce: (seed, path, property) => `npm run sim -- --flows --seed ${seed} --path ${path} --only ${property}`,
};
