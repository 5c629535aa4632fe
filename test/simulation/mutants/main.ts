import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { WORKSPACE } from "../../support/workspace.js";
import { FIRST_SEED, SEEDS, SHRINK_MS } from "../seeds.js";
import { MUTANTS } from "./catalogue.js";
import { fileOf, patched, sourceOf, type Mutant } from "./mutant.js";
import type { ProbeReport } from "./report.js";
import { removeScratch, scratchCopy } from "./scratch.js";
import { outcomeTable, replays, type Outcome } from "./table.js";

const USAGE = `usage: npm run sim:mutants -- [--only NAME[,NAME...]] [--jobs N] [--timeout SECONDS] [--keep] [--no-cluster] [--list]

  For each mutant (a deliberate bug, as an exact patch on one runtime source file): copies the
  workspace, applies the patch, builds, scans seeds ${FIRST_SEED}..${FIRST_SEED + SEEDS - 1} in the order \`npm test\` does,
  stops at the first failing seed, shrinks it and replays the shrunk schedule.

  --only NAME      only these mutants (repeatable, or comma-separated)
  --jobs N         mutants at once (default 1)
  --timeout S      give up on a mutant's scan after S seconds (default 900)
  --keep           keep the scratch copies (their paths are printed)
  --no-cluster     judge by the single-process seeds only (no PostgreSQL)
  --list           list the mutants and exit

  A mutant those seeds do not catch is judged by the lease simulation's seeds (PostgreSQL logs of
  several writers in one process, at FUSEE_TEST_PG_URL), then by the cluster simulation's (processes
  on PostgreSQL at FUSEE_SIM_PG_URL, default database fusee_mutants), which \`npm test\` runs too;
  their schedules do not replay exactly, so a failing seed is run once more instead.`;

interface Args {
  only: Set<string>;
  jobs: number;
  timeoutS: number;
  keep: boolean;
  list: boolean;
  cluster: boolean;
}

function parse(argv: readonly string[]): Args {
  const args: Args = { only: new Set(), jobs: 1, timeoutS: 900, keep: false, list: false, cluster: true };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
      return v;
    };
    if (flag === "--only") for (const n of value().split(",")) args.only.add(n.trim());
    else if (flag === "--jobs") args.jobs = Number(value());
    else if (flag === "--timeout") args.timeoutS = Number(value());
    else if (flag === "--keep") args.keep = true;
    else if (flag === "--list") args.list = true;
    else if (flag === "--no-cluster") args.cluster = false;
    else if (flag === "--help" || flag === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown argument ${flag}\n${USAGE}`);
  }
  if (!Number.isInteger(args.jobs) || args.jobs < 1) throw new Error(`--jobs needs a whole number ≥ 1\n${USAGE}`);
  const unknown = [...args.only].filter((n) => !MUTANTS.some((m) => m.name === n));
  if (unknown.length > 0) throw new Error(`no mutant ${unknown.join(", ")}; --list names them`);
  return args;
}

/** Runs a command to its end, or kills it after `timeoutS`: its output, and how it ended. */
function exec(
  cmd: string,
  argv: readonly string[],
  cwd: string,
  timeoutS: number,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutS * 1000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

const TSC = join(WORKSPACE, "node_modules", "typescript", "bin", "tsc");
const PROBES: Record<ProbeReport["generator"], string> = {
  "single-process": join("test", "dist", "simulation", "mutants", "probe.js"),
  // The lease simulation drives the runtime's PostgreSQL log directly, so it lives with the runtime's own tests.
  leases: join("packages", "runtime", "dist", "test", "postgres", "lease-simulation", "lease-probe.js"),
  cluster: join("test", "dist", "simulation", "mutants", "cluster-probe.js"),
};
const probeOf = (root: string, generator: ProbeReport["generator"]): string => join(root, PROBES[generator]);
/** The cluster's processes share a database: one of the mutants' own, unless the environment names one. */
const CLUSTER_ENV = {
  ...process.env,
  FUSEE_SIM_PG_URL: process.env.FUSEE_SIM_PG_URL ?? "postgres://postgres@127.0.0.1:5432/fusee_mutants",
};

/** Scans the seeds in `root` with its build: the probe's report, or why there is none. */
async function scan(
  root: string,
  generator: ProbeReport["generator"],
  extra: readonly string[],
  timeoutS: number,
): Promise<ProbeReport | string> {
  const argv =
    generator !== "single-process"
      ? [probeOf(root, generator), ...extra]
      : [probeOf(root, generator), "--first", String(FIRST_SEED), "--seeds", String(SEEDS), "--shrink-ms", String(SHRINK_MS), ...extra];
  const r = await exec(process.execPath, argv, root, timeoutS, generator === "cluster" ? CLUSTER_ENV : process.env);
  if (r.timedOut) return `the ${generator} scan ran past ${timeoutS} s`;
  const line = r.stdout.trim().split("\n").pop() ?? "";
  try {
    const report = JSON.parse(line) as ProbeReport;
    if (relative(root, report.runtime).startsWith("..")) return `the scan loaded @fusee/runtime from ${report.runtime}, outside ${root}`;
    return report;
  } catch {
    return `the ${generator} scan ended (${r.code}) without a report:\n${r.stderr.slice(-2000)}`;
  }
}

/**
 * What the unchanged build fails, by generator, scanned once when first needed: a seed and
 * property failing there do not count for a mutant. The file holds them for the probes.
 */
class Baselines {
  private readonly scans = new Map<ProbeReport["generator"], Promise<{ file: string; failures: readonly string[] } | string>>();
  private readonly dir = mkdtempSync(join(tmpdir(), "fusee-mutants-"));

  constructor(private readonly timeoutS: number) {}

  get(generator: ProbeReport["generator"]): Promise<{ file: string; failures: readonly string[] } | string> {
    let found = this.scans.get(generator);
    if (found === undefined) {
      found = this.scan(generator);
      this.scans.set(generator, found);
    }
    return found;
  }

  /** Removes the files the probes read. */
  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Every failure of the unchanged build, as `generator seed:property`. */
  async failures(): Promise<string[]> {
    const out: string[] = [];
    for (const [generator, p] of this.scans) {
      const b = await p;
      if (typeof b === "string") out.push(`${generator}: ${b}`);
      else out.push(...b.failures.map((f) => `${generator} ${f}`));
    }
    return out;
  }

  private async scan(generator: ProbeReport["generator"]): Promise<{ file: string; failures: readonly string[] } | string> {
    console.log(`baseline: the ${generator} simulation's seeds on the unchanged build`);
    const report = await scan(WORKSPACE, generator, ["--baseline"], this.timeoutS);
    if (typeof report === "string") return report;
    const failures = report.failures ?? [];
    console.log(
      failures.length === 0
        ? `  ${generator}: no failures in ${report.seconds.toFixed(1)} s`
        : `  ${generator}: the unchanged build fails ${failures.join(", ")}; these seed/property pairs do not count for mutants`,
    );
    const file = join(this.dir, `${generator}.json`);
    writeFileSync(file, JSON.stringify(failures));
    return { file, failures };
  }
}

async function judge(
  root: string,
  generator: ProbeReport["generator"],
  baselines: Baselines,
  timeoutS: number,
): Promise<ProbeReport | string> {
  const baseline = await baselines.get(generator);
  if (typeof baseline === "string") return `the ${generator} baseline failed: ${baseline}`;
  return scan(root, generator, ["--ignore", baseline.file], timeoutS);
}

async function runMutant(m: Mutant, baselines: Baselines, args: Args): Promise<Outcome> {
  let text: string;
  try {
    text = patched(sourceOf(WORKSPACE, m), m);
  } catch (e) {
    return { mutant: m, verdict: "patch-rot", detail: (e as Error).message };
  }
  const root = scratchCopy(WORKSPACE, m.name);
  try {
    writeFileSync(fileOf(root, m), text);
    const built = Date.now();
    const build = await exec(process.execPath, [TSC, "-b", "test"], root, args.timeoutS, process.env);
    const buildSeconds = (Date.now() - built) / 1000;
    if (build.code !== 0) return { mutant: m, verdict: "build-failed", detail: `${build.stdout}${build.stderr}`.slice(-2000) };
    let report = await judge(root, "single-process", baselines, args.timeoutS);
    // \`npm test\` runs the PostgreSQL simulations' seeds too: a mutant the single process misses is
    // judged by the lease simulation's (the quicker), then by the cluster's.
    for (const generator of ["leases", "cluster"] as const) {
      if (typeof report !== "string" && report.caught === undefined && args.cluster && existsSync(probeOf(root, generator)))
        report = await judge(root, generator, baselines, args.timeoutS);
    }
    if (typeof report === "string") return { mutant: m, verdict: "error", detail: report, buildSeconds };
    return { mutant: m, verdict: report.caught === undefined ? "escaped" : "caught", report, buildSeconds };
  } finally {
    if (args.keep) console.log(`  ${m.name}: kept ${root}`);
    else removeScratch(root);
  }
}

async function main(): Promise<number> {
  let args: Args;
  try {
    args = parse(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const chosen = MUTANTS.filter((m) => args.only.size === 0 || args.only.has(m.name));
  if (args.list) {
    for (const m of chosen) console.log(`${m.name.padEnd(32)} ${m.kind}  (${m.file})`);
    return 0;
  }
  const baselines = new Baselines(args.timeoutS);
  const single = await baselines.get("single-process");
  if (typeof single === "string") {
    console.error(`the baseline scan failed: ${single}`);
    return 1;
  }

  const outcomes: Outcome[] = [];
  const queue = [...chosen];
  const worker = async (): Promise<void> => {
    for (let m = queue.shift(); m !== undefined; m = queue.shift()) {
      const o = await runMutant(m, baselines, args);
      outcomes.push(o);
      const r = o.report?.caught;
      console.log(
        `  ${m.name}: ${o.verdict}${r ? ` at ${o.report?.generator} seed ${r.seed} (${o.report?.seeds} seeds, ${o.report?.seconds.toFixed(1)} s; shrunk replays: ${replays(o)}): ${r.message}` : ""}${o.detail ? `: ${o.detail}` : ""}`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(args.jobs, chosen.length) }, worker));
  outcomes.sort((a, b) => chosen.indexOf(a.mutant) - chosen.indexOf(b.mutant));
  console.log(`\n${outcomeTable(outcomes)}`);
  const bad = outcomes.filter((o) => o.verdict !== "caught");
  const failures = await baselines.failures();
  baselines.dispose();
  if (failures.length > 0) console.log(`\nthe unchanged build already fails the simulation: ${failures.join(", ")}`);
  if (bad.length > 0)
    console.log(
      `\n${bad.length} of ${outcomes.length} mutants not caught: ${bad.map((o) => `${o.mutant.name} (${o.verdict})`).join(", ")}`,
    );
  return bad.length === 0 && failures.length === 0 ? 0 : 1;
}

process.exit(await main());
