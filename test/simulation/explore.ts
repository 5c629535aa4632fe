import fc from "fast-check";
import { FULL_SPACE, scheduleArbitrary, scheduleText, type ProgramSpace, type Schedule } from "./program.js";
import { PROPERTIES, Violation, type Property } from "./properties.js";
import { runSchedule, type RunReport } from "./simulator.js";

/** One schedule's outcome: the seed that generates it, and what went wrong, if anything. */
export interface SeedOutcome {
  readonly seed: number;
  readonly violations: readonly Violation[];
  /** An error that is not a property violation (a bug of the harness itself). */
  readonly crash?: unknown;
  readonly actions: number;
}

/** Runs the schedule of each seed once, collecting the first violation of each property. */
export async function scanSeed(seed: number, space: ProgramSpace = FULL_SPACE): Promise<SeedOutcome> {
  const { schedule, report, error } = await replay(seed, undefined, undefined, space);
  const actions = schedule.actions.length;
  if (error instanceof Violation) return { seed, violations: [error], actions };
  if (error !== undefined) return { seed, violations: [], crash: error, actions };
  return { seed, violations: report?.violations ?? [], actions };
}

export interface Shrunk {
  readonly property: Property;
  readonly seed: number;
  /** fast-check's path to the shrunk counterexample: `--seed S --path P` replays it. */
  readonly path: string;
  readonly schedule: Schedule;
  readonly violation: string;
  readonly shrinks: number;
  readonly space: ProgramSpace;
}

/**
 * Shrinks the schedule of `seed` to a small one that still violates `property` (only that one is
 * checked), within `timeLimitMs`.
 */
export async function shrink(
  seed: number,
  property: Property,
  timeLimitMs: number,
  space: ProgramSpace = FULL_SPACE,
): Promise<Shrunk | undefined> {
  const details = await fc.check(
    fc.asyncProperty(scheduleArbitrary(space), async (s) => {
      await runSchedule(s, { only: property });
    }),
    {
      seed,
      numRuns: 1,
      plugins: [fc.interruptAfterTimeLimit(timeLimitMs)],
    },
  );
  if (!details.failed || details.counterexample === null || details.counterexample === undefined) return undefined;
  const error = details.errorInstance;
  return {
    property,
    seed,
    path: details.counterexamplePath ?? "0",
    schedule: (details.counterexample as unknown as [Schedule])[0],
    violation: error instanceof Error ? error.message : String(error),
    shrinks: details.numShrinks,
    space,
  };
}

/** How a shrunk counterexample is reported. */
export function shrunkText(s: Shrunk): string {
  return [
    `${PROPERTIES[s.property]}`,
    `  reproduce: npm run sim -- --seed ${s.seed} --path ${s.path} --only ${s.property}${s.space.spawn ? "" : " --no-spawn"}`,
    `  schedule (shrunk ${s.shrinks} times):${scheduleText(s.schedule).replace(/\n/g, "\n  ")}`,
    `  ${s.violation}`,
  ].join("\n");
}

/** Replays one schedule exactly and returns its report. */
export async function replay(
  seed: number,
  path: string | undefined,
  property: Property | undefined,
  space: ProgramSpace = FULL_SPACE,
): Promise<{ schedule: Schedule; report: RunReport | undefined; error: unknown }> {
  let schedule: Schedule | undefined;
  let report: RunReport | undefined;
  let error: unknown;
  await fc.check(
    fc.asyncProperty(scheduleArbitrary(space), async (s) => {
      if (schedule !== undefined) return;
      schedule = s;
      try {
        report = await runSchedule(s, property === undefined ? { collect: true } : { only: property });
      } catch (e) {
        error = e;
      }
    }),
    { seed, numRuns: 1, ...(path !== undefined ? { path } : {}), endOnFailure: true },
  );
  return { schedule: schedule as Schedule, report, error };
}
