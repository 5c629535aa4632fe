import { FULL_SPACE, scheduleArbitrary, scheduleText, type ProgramSpace, type Schedule } from "./program.js";
import { PROPERTIES, Violation, type Property } from "./properties.js";
import type { Simulation } from "./seed-scanner.js";
import { runSchedule } from "./simulator.js";

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
