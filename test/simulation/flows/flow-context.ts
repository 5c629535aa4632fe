import type { FlowEngines } from "./flow-engine.js";
import type { FlowPlan } from "./flow-plan.js";
import type { FlowProperty } from "./flow-properties.js";

/** What each part of a flow simulation shares: the engines, the plan, the trace and where violations go. */
export interface FlowContext {
  readonly engines: FlowEngines;
  readonly plan: FlowPlan;
  readonly trace: string[];
  violate(property: FlowProperty, detail: string): void;
}
