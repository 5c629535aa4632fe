// Seeds run on every test run: the same schedules each time (`npm run sim -- --cluster --seed S
// --seeds 1` runs one again). The processes' interleaving is the machine's, so these seeds are a
// sample of the schedules, not a replay of one execution; `npm run sim -- --cluster --seeds N`
// runs more. `npm run sim:mutants` runs the same seeds for a mutant the single-process seeds miss.
// Seeds 4 to 7 place every action between them: two schedules worked on from other processes
// (4, 7), seven parents with children under all three close policies (5, 6, 7), terminates, relays,
// with-start calls, resets, the allow-all schedule, batched events (5, and 6 with the key's owner
// SIGKILLed under them), every fault, and clocks up to 3 s apart.
export const CLUSTER_FIRST_SEED = 4;
export const CLUSTER_SEEDS = 4;
