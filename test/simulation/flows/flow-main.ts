import { flowShrunkText, replayFlow, scanFlowSeed, shrinkFlow } from "./flow-explore.js";
import { saveRegression } from "../regressions.js";
import { flowPlanText } from "./flow-plan.js";
import { FLOW_PROPERTIES, FlowViolation, type FlowProperty } from "./flow-properties.js";

/** What `npm run sim -- --flows` was asked for. */
export interface FlowArgs {
  readonly seeds: number;
  readonly seed: number | undefined;
  readonly path: string | undefined;
  readonly only: string | undefined;
  readonly shrinkSeconds: number;
  /** With a seed, a path and a property: where to keep the plan as a regression every test run replays. */
  readonly save: string | undefined;
}

/** `npm run sim -- --flows`: checks generated plans of schedules, limits, batches, debounced starts and tokens. */
export async function flowsMain(args: FlowArgs): Promise<number> {
  if (args.only !== undefined && !(args.only in FLOW_PROPERTIES))
    throw new Error(`no flow property '${args.only}' (${Object.keys(FLOW_PROPERTIES).join(", ")})`);
  const only = args.only as FlowProperty | undefined;
  if (args.seed !== undefined && args.path !== undefined) return replayOne(args.seed, args.path, only, args.save);
  const first = args.seed ?? Date.now() % 1_000_000_000;
  console.log(`checking ${args.seeds} flow plans, seeds ${first}..${first + args.seeds - 1}`);
  const firstSeeds = new Map<FlowProperty, { seed: number; message: string }>();
  const counts = new Map<FlowProperty, number>();
  const crashes: Array<{ seed: number; error: unknown }> = [];
  const began = Date.now();
  let lastReport = began;
  let actions = 0;
  for (let i = 0; i < args.seeds; i++) {
    const seed = first + i;
    const outcome = await scanFlowSeed(seed);
    if (outcome.crash !== undefined) crashes.push({ seed, error: outcome.crash });
    for (const v of outcome.violations) {
      if (only !== undefined && v.property !== only) continue;
      counts.set(v.property, (counts.get(v.property) ?? 0) + 1);
      if (!firstSeeds.has(v.property)) firstSeeds.set(v.property, { seed, message: v.message });
    }
    actions += outcome.actions;
    const now = Date.now();
    if (now - lastReport > 5_000 || i === args.seeds - 1) {
      lastReport = now;
      const rate = (i + 1) / ((now - began) / 1000);
      const failing = [...counts].map(([p, n]) => `${p} ${n}`).join(", ") || "none";
      console.log(
        `${i + 1}/${args.seeds} plans, ${rate.toFixed(1)}/s (${Math.round(rate * 3600)}/h), ${actions} actions; violations by property: ${failing}`,
      );
    }
  }
  const seconds = (Date.now() - began) / 1000;
  console.log(`\n${args.seeds} plans in ${seconds.toFixed(1)} s: ${Math.round((args.seeds / seconds) * 3600)} plans/h`);
  for (const c of crashes)
    console.log(`\nseed ${c.seed}: the harness failed: ${c.error instanceof Error ? c.error.stack : String(c.error)}`);
  for (const [property, { seed, message }] of firstSeeds) {
    console.log(`\n${counts.get(property)} plan(s) violate "${FLOW_PROPERTIES[property]}"; first: seed ${seed}: ${message}`);
    if (args.shrinkSeconds <= 0) continue;
    const shrunk = await shrinkFlow(seed, property, args.shrinkSeconds * 1000);
    console.log(shrunk === undefined ? `  (seed ${seed} did not fail again when checked for this property alone)` : flowShrunkText(shrunk));
  }
  return firstSeeds.size === 0 && crashes.length === 0 ? 0 : 1;
}

async function replayOne(seed: number, path: string, only: FlowProperty | undefined, save: string | undefined): Promise<number> {
  const { plan, report, error } = await replayFlow(seed, path, only);
  console.log(`seed ${seed}, path ${path}:${flowPlanText(plan)}`);
  for (const line of report?.trace ?? (error instanceof FlowViolation ? error.trace : [])) console.log(line);
  const violations = error !== undefined ? [error] : (report?.violations ?? []);
  for (const v of violations) console.log(`\n${v instanceof Error ? (v.stack ?? v.message) : String(v)}`);
  if (save !== undefined) {
    if (only === undefined) throw new Error("--save needs --only: a regression checks one property");
    const first = violations[0];
    saveRegression(save, {
      property: only,
      found: first instanceof Error ? first.message : String(first ?? "nothing (it passed when saved)"),
      schedule: plan,
    });
    console.log(`\nsaved to ${save}`);
  }
  return violations.length === 0 ? 0 : 1;
}
