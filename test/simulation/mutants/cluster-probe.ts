import { readFileSync } from "node:fs";
import { ensureDatabase } from "../cluster/cluster-db.js";
import { clusterSchedule } from "../cluster/cluster-schedule.js";
import { CLUSTER_FIRST_SEED, CLUSTER_SEEDS } from "../cluster/cluster-seeds.js";
import { runClusterSchedule, type ClusterReport } from "../cluster/cluster-simulator.js";
import { runtimeLocation, type ProbeReport } from "./report.js";

/**
 * Runs the cluster simulation's seeds (those `npm test` runs) in the copy it was built in, and
 * prints one line of JSON (a {@link ProbeReport}): with `--baseline`, every seed's failures;
 * otherwise the first seed that fails in a way the baseline (given by `--ignore FILE`) does not,
 * and that seed's failure when its schedule runs once more.
 */
function failures(r: ClusterReport): Array<{ property: string; message: string }> {
  const found = r.violations.map((v) => ({ property: v.property as string, message: v.detail }));
  if (r.harnessError !== undefined) found.push({ property: "crash", message: r.harnessError.split("\n")[0] ?? "" });
  return found;
}

async function probe(argv: readonly string[]): Promise<ProbeReport> {
  const baseline = argv.includes("--baseline");
  const at = argv.indexOf("--ignore");
  const ignored = new Set<string>(at < 0 ? [] : (JSON.parse(readFileSync(argv[at + 1] as string, "utf8")) as string[]));
  const generator = "cluster";
  const runtime = runtimeLocation();
  await ensureDatabase();
  const found: string[] = [];
  const began = Date.now();
  for (let i = 0; i < CLUSTER_SEEDS; i++) {
    const seed = CLUSTER_FIRST_SEED + i;
    const fresh = failures(await runClusterSchedule(clusterSchedule(seed))).filter((f) => !ignored.has(`${seed}:${f.property}`));
    if (baseline) {
      found.push(...fresh.map((f) => `${seed}:${f.property}`));
      continue;
    }
    const first = fresh[0];
    if (first === undefined) continue;
    const seconds = (Date.now() - began) / 1000;
    const again = failures(await runClusterSchedule(clusterSchedule(seed))).find((f) => f.property === first.property);
    return { generator, runtime, seeds: i + 1, seconds, caught: { seed, ...first, rerun: again?.message } };
  }
  const seconds = (Date.now() - began) / 1000;
  return baseline
    ? { generator, runtime, seeds: CLUSTER_SEEDS, seconds, failures: found }
    : { generator, runtime, seeds: CLUSTER_SEEDS, seconds };
}

const report = await probe(process.argv.slice(2));
process.stdout.write(`${JSON.stringify(report)}\n`);
process.exit(0);
