import fc from "fast-check";
import { flowPlanArbitrary, flowPlanText, type FlowPlan } from "./flow-plan.js";
import { FLOW_PROPERTIES, FlowViolation, type FlowProperty } from "./flow-properties.js";
import { runFlowPlan, type FlowReport } from "./flow-sim.js";

/** One plan's outcome: the seed that generates it, and what went wrong, if anything. */
export interface FlowSeedOutcome {
  readonly seed: number;
  readonly violations: readonly FlowViolation[];
  /** An error that is not a property violation (a bug of the harness itself). */
  readonly crash?: unknown;
  readonly actions: number;
}

/** Runs the plan of one seed, collecting the first violation of each property. */
export async function scanFlowSeed(seed: number): Promise<FlowSeedOutcome> {
  const { plan, report, error } = await replayFlow(seed, undefined, undefined);
  const actions = plan.actions.length;
  if (error instanceof FlowViolation) return { seed, violations: [error], actions };
  if (error !== undefined) return { seed, violations: [], crash: error, actions };
  return { seed, violations: report?.violations ?? [], actions };
}

export interface FlowShrunk {
  readonly property: FlowProperty;
  readonly seed: number;
  readonly path: string;
  readonly plan: FlowPlan;
  readonly violation: string;
  readonly shrinks: number;
}

/** Shrinks the plan of `seed` to a small one that still violates `property`, within `timeLimitMs`. */
export async function shrinkFlow(seed: number, property: FlowProperty, timeLimitMs: number): Promise<FlowShrunk | undefined> {
  const details = await fc.check(
    fc.asyncProperty(flowPlanArbitrary(), async (p) => {
      await runFlowPlan(p, { only: property });
    }),
    { seed, numRuns: 1, plugins: [fc.interruptAfterTimeLimit(timeLimitMs)] },
  );
  if (!details.failed || details.counterexample === null || details.counterexample === undefined) return undefined;
  const error = details.errorInstance;
  return {
    property,
    seed,
    path: details.counterexamplePath ?? "0",
    plan: (details.counterexample as unknown as [FlowPlan])[0],
    violation: error instanceof Error ? error.message : String(error),
    shrinks: details.numShrinks,
  };
}

export function flowShrunkText(s: FlowShrunk): string {
  return [
    `${FLOW_PROPERTIES[s.property]}`,
    `  reproduce: npm run sim -- --flows --seed ${s.seed} --path ${s.path} --only ${s.property}`,
    `  plan (shrunk ${s.shrinks} times):${flowPlanText(s.plan).replace(/\n/g, "\n  ")}`,
    `  ${s.violation}`,
  ].join("\n");
}

/** Replays one plan exactly and returns its report. */
export async function replayFlow(
  seed: number,
  path: string | undefined,
  property: FlowProperty | undefined,
): Promise<{ plan: FlowPlan; report: FlowReport | undefined; error: unknown }> {
  let plan: FlowPlan | undefined;
  let report: FlowReport | undefined;
  let error: unknown;
  await fc.check(
    fc.asyncProperty(flowPlanArbitrary(), async (p) => {
      if (plan !== undefined) return;
      plan = p;
      try {
        report = await runFlowPlan(p, property === undefined ? { collect: true } : { only: property });
      } catch (e) {
        error = e;
      }
    }),
    { seed, numRuns: 1, ...(path !== undefined ? { path } : {}), endOnFailure: true },
  );
  return { plan: plan as FlowPlan, report, error };
}
