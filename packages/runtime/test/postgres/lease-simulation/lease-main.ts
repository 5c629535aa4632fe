/*
 * `node packages/runtime/dist/test/postgres/lease-simulation/lease-main.js [--seed S] [--seeds N] [--trace]`:
 * runs lease schedules, one per seed, on the database at FUSEE_TEST_PG_URL, and prints each
 * failing seed's violations, schedule and trace, and the rate schedules ran at.
 */
import { ensureDatabase } from "../support/database.js";
import { leaseViolations } from "./lease-checks.js";
import { leaseSchedule, leaseScheduleText } from "./lease-schedule.js";
import { runLeaseSchedule } from "./lease-simulator.js";

function arg(argv: readonly string[], flag: string): number | undefined {
  const at = argv.indexOf(flag);
  return at < 0 ? undefined : Number(argv[at + 1]);
}

async function main(argv: readonly string[]): Promise<number> {
  const first = arg(argv, "--seed") ?? Date.now() % 1_000_000;
  const seeds = arg(argv, "--seeds") ?? 20;
  const trace = argv.includes("--trace");
  await ensureDatabase();
  console.log(`lease simulation: seeds ${first}..${first + seeds - 1}`);
  const began = Date.now();
  const failed: number[] = [];
  for (let seed = first; seed < first + seeds; seed++) {
    const run = await runLeaseSchedule(leaseSchedule(seed));
    const found = leaseViolations(run);
    const bad = found.length > 0 || run.harnessError !== undefined;
    if (bad) failed.push(seed);
    if (bad || trace) {
      console.log(`\nseed ${seed}: ${bad ? "FAILED" : "passed"}`);
      for (const v of found) console.log(`  ${v.property}: ${v.detail}`);
      if (run.harnessError !== undefined) console.log(`  harness: ${run.harnessError}`);
      console.log(leaseScheduleText(run.schedule));
      console.log(run.trace.join("\n"));
    }
  }
  const hours = (Date.now() - began) / 3_600_000;
  console.log(
    `\n${seeds} schedules, ${failed.length} failed${failed.length > 0 ? ` (seeds ${failed.join(", ")})` : ""}; ${Math.round(seeds / hours)} schedules/hour`,
  );
  return failed.length === 0 ? 0 : 1;
}

process.exit(await main(process.argv.slice(2)));
