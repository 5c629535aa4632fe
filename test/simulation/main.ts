import { PROPERTIES } from "./properties.js";
import { singleSimulation } from "./explore.js";
import { FULL_SPACE, type ProgramSpace } from "./program.js";
import { clusterMain } from "./cluster/cluster-main.js";
import { saveRegression } from "./regressions.js";
import { FLOWS } from "./flows/flow-explore.js";
import { replayOne, scanSeeds, type Simulation } from "./seed-scanner.js";

const USAGE = `usage: npm run sim -- [--flows | --cluster] [--seeds N] [--seed S] [--path P] [--only PROPERTY] [--shrink-seconds T] [--no-spawn]

  --flows            plans of schedules, limits, batches, debounced starts and completion tokens instead
  --seeds N          schedules to check, one per seed from S on (default 200)
  --seed S           the first seed (default: chosen from the time and printed)
  --path P           with --seed: replay the counterexample fast-check printed, and print its trace
  --only PROPERTY    check one property (${Object.keys(PROPERTIES).join(", ")};
                     with --flows: ${Object.keys(FLOWS.properties).join(", ")})
  --save FILE        with --path and --only: write the schedule to FILE, a regression every test run replays
                     (test/simulation/regressions/NAME.json; with --flows, regressions/flows/NAME.json)
  --shrink-seconds T time to shrink the first counterexample of each property (default 30; 0: none)
  --no-spawn         programs without steps that start workflows (to tell whether a failure needs one)
  --cluster          the cluster simulation instead: engine processes on one PostgreSQL (--cluster --help)`;

interface Args {
  seeds: number;
  seed: number | undefined;
  path: string | undefined;
  shrinkSeconds: number;
  space: ProgramSpace;
  flows: boolean;
  only: string | undefined;
  save: string | undefined;
}

function parse(argv: readonly string[]): Args {
  const args: Args = {
    seeds: 200,
    seed: undefined,
    path: undefined,
    shrinkSeconds: 30,
    space: FULL_SPACE,
    flows: false,
    only: undefined,
    save: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    const need = (): string => {
      if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
      i++;
      return value;
    };
    if (flag === "--seeds") args.seeds = Number(need());
    else if (flag === "--seed") args.seed = Number(need());
    else if (flag === "--path") args.path = need();
    else if (flag === "--save") args.save = need();
    else if (flag === "--flows") args.flows = true;
    else if (flag === "--only") args.only = need();
    else if (flag === "--shrink-seconds") args.shrinkSeconds = Number(need());
    else if (flag === "--no-spawn") args.space = { ...args.space, spawn: false };
    else if (flag === "--help" || flag === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown argument ${flag}\n${USAGE}`);
  }
  if (!Number.isInteger(args.seeds) || args.seeds < 1) throw new Error(`--seeds needs a whole number ≥ 1\n${USAGE}`);
  return args;
}

/** Replays one counterexample (saving it when asked) or scans seeds, with the simulation asked for. */
async function drive<Input, P extends string>(sim: Simulation<Input, P>, args: Args): Promise<number> {
  const only = args.only as P | undefined;
  if (only !== undefined && !(only in sim.properties))
    throw new Error(`no property '${only}' of the ${sim.noun}s (${Object.keys(sim.properties).join(", ")})`);
  if (args.seed === undefined || args.path === undefined)
    return scanSeeds(sim, { seeds: args.seeds, first: args.seed ?? Date.now() % 1_000_000_000, only, shrinkSeconds: args.shrinkSeconds });
  const { code, input, violations } = await replayOne(sim, args.seed, args.path, only);
  if (args.save !== undefined) {
    if (only === undefined) throw new Error(`--save needs --only: a regression checks one property\n${USAGE}`);
    const first = violations[0];
    saveRegression(args.save, {
      property: only,
      found: first instanceof Error ? first.message : String(first ?? "nothing (it passed when saved)"),
      schedule: input,
    });
    console.log(`\nsaved to ${args.save}`);
  }
  return code;
}

async function main(): Promise<void> {
  // The cluster simulation has flags of its own (see cluster/cluster-main.ts).
  if (process.argv.includes("--cluster")) process.exit(await clusterMain(process.argv.slice(2)));
  let args: Args;
  try {
    args = parse(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
  try {
    process.exit(args.flows ? await drive(FLOWS, args) : await drive(singleSimulation(args.space), args));
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
}

await main();
