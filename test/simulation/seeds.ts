// Seeds checked on every test run: the same schedules each time, so a failure reproduces with
// `npm run sim -- --seed S --path P`. `npm run sim -- --seeds N` checks more. `npm run sim:mutants`
// scans the same seeds, in the same order, for each deliberate bug.
export const FIRST_SEED = 1;
export const SEEDS = 600;
// Time to shrink the first counterexample of a property that fails.
export const SHRINK_MS = 10_000;
