/*
 * The lease simulation's probe for `npm run sim:mutants` (test/simulation/mutants/main.ts): runs
 * the seeds `npm test` runs in the copy it was built in, and prints one line of JSON in the shape
 * of the runner's `ProbeReport`: with `--baseline`, every seed's failures as `seed:property`;
 * otherwise the first seed that fails in a way the baseline (given by `--ignore FILE`) does not,
 * and that seed's failure when its schedule runs once more (the database's interleaving is not
 * replayed exactly).
 */
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ensureDatabase } from "../support/database.js";
import { leaseViolations } from "./lease-checks.js";
import { leaseSchedule } from "./lease-schedule.js";
import { LEASE_FIRST_SEED, LEASE_SEEDS } from "./lease-seeds.js";
import { runLeaseSchedule, type LeaseRun } from "./lease-simulator.js";

function failures(r: LeaseRun): Array<{ property: string; message: string }> {
  const found = leaseViolations(r).map((v) => ({ property: v.property as string, message: v.detail }));
  if (r.harnessError !== undefined) found.push({ property: "crash", message: r.harnessError.split("\n")[0] ?? "" });
  return found;
}

async function probe(argv: readonly string[]): Promise<object> {
  const baseline = argv.includes("--baseline");
  const at = argv.indexOf("--ignore");
  const ignored = new Set<string>(at < 0 ? [] : (JSON.parse(readFileSync(argv[at + 1] as string, "utf8")) as string[]));
  const generator = "leases";
  // The runner checks that the storage under test is the copy's own build.
  const runtime = realpathSync(fileURLToPath(new URL("../../../src/storage/postgres/pg-log.js", import.meta.url)));
  await ensureDatabase();
  const found: string[] = [];
  const began = Date.now();
  for (let i = 0; i < LEASE_SEEDS; i++) {
    const seed = LEASE_FIRST_SEED + i;
    const fresh = failures(await runLeaseSchedule(leaseSchedule(seed))).filter((f) => !ignored.has(`${seed}:${f.property}`));
    if (baseline) {
      found.push(...fresh.map((f) => `${seed}:${f.property}`));
      continue;
    }
    const first = fresh[0];
    if (first === undefined) continue;
    const seconds = (Date.now() - began) / 1000;
    const again = failures(await runLeaseSchedule(leaseSchedule(seed))).find((f) => f.property === first.property);
    return { generator, runtime, seeds: i + 1, seconds, caught: { seed, ...first, rerun: again?.message } };
  }
  const seconds = (Date.now() - began) / 1000;
  return baseline
    ? { generator, runtime, seeds: LEASE_SEEDS, seconds, failures: found }
    : { generator, runtime, seeds: LEASE_SEEDS, seconds };
}

const report = await probe(process.argv.slice(2));
process.stdout.write(`${JSON.stringify(report)}\n`);
process.exit(0);
