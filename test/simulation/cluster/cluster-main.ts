/*
 * `npm run sim -- --cluster`: schedules of the cluster simulation, one per seed, with the rate
 * they ran at and, for each failing seed, its trace and the command that runs it again.
 */
import { CLUSTER_PROPERTIES, type ClusterProperty } from "./cluster-model.js";
import { ensureDatabase } from "./cluster-db.js";
import { clusterSchedule, FAULTS, FULL_CLUSTER_SPACE, type Fault, type ScheduleSpace } from "./cluster-schedule.js";
import { clusterScheduleText } from "./cluster-schedule-text.js";
import { runClusterSchedule } from "./cluster-simulator.js";

export const CLUSTER_USAGE = `usage: npm run sim -- --cluster [--seeds N] [--seed S] [--faults F,...] [--keep] [--trace]

  --seeds N      schedules to run, one per seed from S on (default 20)
  --seed S       the first seed (default: chosen from the time and printed)
  --faults F,... the faults schedules may place (default all: ${FAULTS.join(",")}; "none" for none)
  --keep         keep each schedule's PostgreSQL schema afterwards
  --trace        print every schedule's trace, not only failing ones'

Engine processes share a database on FUSEE_SIM_PG_URL (default postgres://postgres@127.0.0.1:5432/fusee_simcluster).
A seed gives the same schedule every time; the processes' interleaving is the machine's, so a failing
seed fails often rather than always.`;

interface ClusterArgs {
  seeds: number;
  seed: number | undefined;
  space: ScheduleSpace;
  keep: boolean;
  trace: boolean;
}

function parse(argv: readonly string[]): ClusterArgs {
  const args: ClusterArgs = { seeds: 20, seed: undefined, space: FULL_CLUSTER_SPACE, keep: false, trace: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const need = (): string => {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${flag} needs a value\n${CLUSTER_USAGE}`);
      return value;
    };
    if (flag === "--cluster") continue;
    else if (flag === "--seeds") args.seeds = Number(need());
    else if (flag === "--seed") args.seed = Number(need());
    else if (flag === "--keep") args.keep = true;
    else if (flag === "--trace") args.trace = true;
    else if (flag === "--faults") {
      const list = need();
      const faults = list === "none" ? [] : list.split(",");
      for (const f of faults) if (!(FAULTS as readonly string[]).includes(f)) throw new Error(`no fault '${f}'\n${CLUSTER_USAGE}`);
      args.space = { ...args.space, faults: new Set(faults as Fault[]) };
    } else throw new Error(`unknown argument ${flag}\n${CLUSTER_USAGE}`);
  }
  if (!Number.isInteger(args.seeds) || args.seeds < 1) throw new Error(`--seeds needs a whole number ≥ 1\n${CLUSTER_USAGE}`);
  return args;
}

/** Runs the cluster simulation as the command line asks; resolves with the exit code. */
export async function clusterMain(argv: readonly string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(CLUSTER_USAGE);
    return 0;
  }
  let args: ClusterArgs;
  try {
    args = parse(argv);
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  await ensureDatabase();
  const first = args.seed ?? Date.now() % 1_000_000_000;
  console.log(`checking ${args.seeds} cluster schedules, seeds ${first}..${first + args.seeds - 1}`);
  const began = Date.now();
  const failing: number[] = [];
  const counts = new Map<ClusterProperty, number>();
  let acknowledged = 0;
  let inDoubt = 0;
  let takeovers = 0;
  const covered = { relayed: 0, closed: 0, instants: 0, terminated: 0, withStart: 0, scheduleOps: 0, batches: 0 };
  for (let i = 0; i < args.seeds; i++) {
    const seed = first + i;
    const schedule = clusterSchedule(seed, args.space);
    const report = await runClusterSchedule(schedule, { keep: args.keep });
    acknowledged += report.acknowledged;
    inDoubt += report.inDoubt;
    takeovers += report.takeovers;
    for (const k of Object.keys(covered) as (keyof typeof covered)[]) covered[k] += report.covered[k];
    const bad = report.violations.length > 0 || report.harnessError !== undefined;
    if (report.harnessError !== undefined) console.log(`seed ${seed}: the harness failed: ${report.harnessError}`);
    if (bad) failing.push(seed);
    for (const v of report.violations) counts.set(v.property, (counts.get(v.property) ?? 0) + 1);
    const rate = (i + 1) / ((Date.now() - began) / 3_600_000);
    console.log(
      `seed ${seed}: ${bad ? `${report.violations.length} violation(s)` : "ok"} in ${(report.ms / 1000).toFixed(1)} s ` +
        `(${report.acknowledged} calls acknowledged, ${report.inDoubt} in doubt, ${report.takeovers} takeovers); ${i + 1}/${args.seeds}, ${Math.round(rate)} schedules/h`,
    );
    if (bad || args.trace) {
      console.log(clusterScheduleText(schedule));
      for (const line of report.trace) console.log(`    ${line}`);
      if (bad) console.log(`  again: npm run sim -- --cluster --seed ${seed} --seeds 1${faultsFlag(args.space)}`);
    }
  }
  const seconds = (Date.now() - began) / 1000;
  console.log(
    `\n${args.seeds} cluster schedules in ${seconds.toFixed(1)} s: ${Math.round((args.seeds / seconds) * 3600)} schedules/h; ` +
      `${acknowledged} calls acknowledged, ${inDoubt} in doubt, ${takeovers} takeovers that wrote; ` +
      `${covered.relayed} messages relayed, ${covered.closed} children closed, ${covered.instants} schedule instants started, ` +
      `${covered.terminated} terminates, ${covered.withStart} with-start calls, ${covered.scheduleOps} schedule operations, ${covered.batches} batch runs checked`,
  );
  for (const [p, n] of counts) console.log(`${n} violation(s) of "${CLUSTER_PROPERTIES[p]}"`);
  if (failing.length > 0) console.log(`failing seeds: ${failing.join(" ")}`);
  return failing.length === 0 ? 0 : 1;
}

function faultsFlag(space: ScheduleSpace): string {
  return space.faults.size === FAULTS.length ? "" : ` --faults ${[...space.faults].join(",") || "none"}`;
}
