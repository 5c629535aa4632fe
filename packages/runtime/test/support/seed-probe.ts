import { readFileSync } from "node:fs";

/** One way a schedule went wrong: the property it violated (`crash` when the harness failed). */
export interface ProbeFailure {
  readonly property: string;
  readonly message: string;
}

/** What a probe scans: a simulation whose schedules do not replay exactly, run seed by seed. */
export interface SeedScan {
  readonly generator: string;
  /** Where the code under test resolved, so the mutant runner can check it is the copy's own build. */
  readonly runtime: string;
  readonly firstSeed: number;
  readonly seeds: number;
  /** Runs one seed's schedule and says how it failed, if it did. */
  readonly run: (seed: number) => Promise<readonly ProbeFailure[]>;
}

/**
 * The seed loop of the PostgreSQL simulations' probes for the mutant runner, given its arguments:
 * with `--baseline`, every seed's failures as `seed:property`; otherwise the first seed that fails
 * in a way the baseline (`--ignore FILE`) does not, and that seed's failure of the same property
 * when its schedule runs once more (the database's interleaving is the machine's, so a rerun is
 * the only evidence that a failure reproduces).
 */
export async function scanSeeds(scan: SeedScan, argv: readonly string[]): Promise<object> {
  const baseline = argv.includes("--baseline");
  const at = argv.indexOf("--ignore");
  const ignored = new Set<string>(at < 0 ? [] : (JSON.parse(readFileSync(argv[at + 1] as string, "utf8")) as string[]));
  const { generator, runtime } = scan;
  const found: string[] = [];
  const began = Date.now();
  for (let i = 0; i < scan.seeds; i++) {
    const seed = scan.firstSeed + i;
    const fresh = (await scan.run(seed)).filter((f) => !ignored.has(`${seed}:${f.property}`));
    if (baseline) {
      found.push(...fresh.map((f) => `${seed}:${f.property}`));
      continue;
    }
    const first = fresh[0];
    if (first === undefined) continue;
    const seconds = (Date.now() - began) / 1000;
    const again = (await scan.run(seed)).find((f) => f.property === first.property);
    return { generator, runtime, seeds: i + 1, seconds, caught: { seed, ...first, rerun: again?.message } };
  }
  const seconds = (Date.now() - began) / 1000;
  return baseline
    ? { generator, runtime, seeds: scan.seeds, seconds, failures: found }
    : { generator, runtime, seeds: scan.seeds, seconds };
}

/** A harness error as the one failure it stands for, beside the violations a run found. */
export function withHarnessError(found: ProbeFailure[], harnessError: string | undefined): ProbeFailure[] {
  if (harnessError !== undefined) found.push({ property: "crash", message: harnessError.split("\n")[0] ?? "" });
  return found;
}
