// Seeds run on every test run: the same schedules each time. The database decides the exact
// interleaving, so these seeds are a sample of the schedules, not a replay of one execution;
// `node packages/runtime/dist/test/postgres/lease-simulation/lease-main.js --seeds N` runs more, and
// `npm run sim:mutants` runs these seeds for a mutant the other simulations miss.
export const LEASE_FIRST_SEED = 13;
export const LEASE_SEEDS = 3;
