/*
 * The lease simulation's probe for `npm run sim:mutants` (test/simulation/mutants/main.ts): runs
 * the seeds `npm test` runs in the copy it was built in and prints one line of JSON in the shape
 * of the runner's `ProbeReport` (see `scanSeeds`).
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ensureDatabase } from "../support/database.js";
import { scanSeeds, withHarnessError } from "../../support/seed-probe.js";
import { leaseViolations } from "./lease-checks.js";
import { leaseSchedule } from "./lease-schedule.js";
import { LEASE_FIRST_SEED, LEASE_SEEDS } from "./lease-seeds.js";
import { runLeaseSchedule } from "./lease-simulator.js";

await ensureDatabase();
const report = await scanSeeds(
  {
    generator: "leases",
    // The storage under test, which the runner checks is the copy's own build.
    runtime: realpathSync(fileURLToPath(new URL("../../../src/storage/postgres/pg-log.js", import.meta.url))),
    firstSeed: LEASE_FIRST_SEED,
    seeds: LEASE_SEEDS,
    run: async (seed) => {
      const r = await runLeaseSchedule(leaseSchedule(seed));
      const found = leaseViolations(r).map((v) => ({ property: v.property as string, message: v.detail }));
      return withHarnessError(found, r.harnessError);
    },
  },
  process.argv.slice(2),
);
process.stdout.write(`${JSON.stringify(report)}\n`);
process.exit(0);
