import { FULL_SPACE, scheduleArbitrary, scheduleText, type ProgramSpace, type Schedule } from "./program.js";
import { PROPERTIES, Violation, type Property } from "./properties.js";
import * as scanner from "./seed-scanner.js";
import type { SeedOutcome, Simulation } from "./seed-scanner.js";
import { runSchedule, type RunReport } from "./simulator.js";

/** The single-process simulation over the programs of `space`, for the seed scanner. */
export function singleSimulation(space: ProgramSpace = FULL_SPACE): Simulation<Schedule, Property> {
  return {
    noun: "schedule",
    properties: PROPERTIES,
    arbitrary: () => scheduleArbitrary(space),
    run: runSchedule,
    isViolation: (e): e is Violation => e instanceof Violation,
    actions: (s) => s.actions.length,
    text: scheduleText,
    reproduce: (seed, path, property) =>
      `npm run sim -- --seed ${seed} --path ${path} --only ${property}${space.spawn ? "" : " --no-spawn"}`,
  };
}

/** Runs the schedule of a seed once, collecting the first violation of each property. */
export function scanSeed(seed: number, space: ProgramSpace = FULL_SPACE): Promise<SeedOutcome<Property>> {
  return scanner.scanSeed(singleSimulation(space), seed);
}

/** Shrinks the schedule of `seed` to a small one that still violates `property`, within `timeLimitMs`. */
export async function shrink(
  seed: number,
  property: Property,
  timeLimitMs: number,
  space: ProgramSpace = FULL_SPACE,
): Promise<(scanner.Shrunk<Schedule, Property> & { readonly schedule: Schedule }) | undefined> {
  const shrunk = await scanner.shrink(singleSimulation(space), seed, property, timeLimitMs);
  return shrunk === undefined ? undefined : { ...shrunk, schedule: shrunk.input };
}

/** Replays one schedule exactly and returns its report. */
export async function replay(
  seed: number,
  path: string | undefined,
  property: Property | undefined,
  space: ProgramSpace = FULL_SPACE,
): Promise<{ schedule: Schedule; report: RunReport | undefined; error: unknown }> {
  const { input, report, error } = await scanner.replay(singleSimulation(space), seed, path, property);
  return { schedule: input, report: report as RunReport | undefined, error };
}
