/*
 * The cluster simulation's probe for `npm run sim:mutants`: runs the seeds `npm test` runs in the
 * copy it was built in and prints one line of JSON, a {@link ProbeReport} (see `scanSeeds`).
 */
import type * as SeedProbe from "../../../packages/runtime/test/support/seed-probe.js";
import { ensureDatabase } from "../cluster/cluster-db.js";
import { clusterSchedule } from "../cluster/cluster-schedule.js";
import { CLUSTER_FIRST_SEED, CLUSTER_SEEDS } from "../cluster/cluster-seeds.js";
import { runClusterSchedule } from "../cluster/cluster-simulator.js";
import { runtimeLocation, type ProbeReport } from "./report.js";

const { scanSeeds, withHarnessError } = (await import(
  new URL("../../../../packages/runtime/dist/test/support/seed-probe.js", import.meta.url).href
)) as typeof SeedProbe;

await ensureDatabase();
const report = (await scanSeeds(
  {
    generator: "cluster",
    runtime: runtimeLocation(),
    firstSeed: CLUSTER_FIRST_SEED,
    seeds: CLUSTER_SEEDS,
    run: async (seed) => {
      const r = await runClusterSchedule(clusterSchedule(seed));
      const found = r.violations.map((v) => ({ property: v.property as string, message: v.detail }));
      return withHarnessError(found, r.harnessError);
    },
  },
  process.argv.slice(2),
)) as ProbeReport;
process.stdout.write(`${JSON.stringify(report)}\n`);
process.exit(0);
