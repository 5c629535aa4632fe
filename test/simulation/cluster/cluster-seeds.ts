// Seeds run on every test run, in the test space (`TEST_CLUSTER_SPACE`): the same schedules each
// time (`npm run sim -- --cluster --test-space --seed S --seeds 1` runs one again). The processes' interleaving is the machine's, so these seeds are a
// sample of the schedules, not a replay of one execution; `npm run sim -- --cluster --seeds N`
// runs more. `npm run sim:mutants` runs the same seeds for a mutant the single-process seeds miss.
export const CLUSTER_FIRST_SEED = 1;
export const CLUSTER_SEEDS = 4;
