import { PROPERTIES, Violation, type Property } from "./properties.js";
import { replay, scanSeed, shrink, shrunkText } from "./explore.js";
import { FULL_SPACE, scheduleText, type ProgramSpace } from "./program.js";
import { clusterMain } from "./cluster/cluster-main.js";
import { saveRegression } from "./regressions.js";
import { flowsMain } from "./flows/flow-main.js";

const USAGE = `usage: npm run sim -- [--flows | --cluster] [--seeds N] [--seed S] [--path P] [--only PROPERTY] [--shrink-seconds T] [--no-spawn]

  --flows            plans of schedules, limits, batches, debounced starts and completion tokens instead
  --seeds N          schedules to check, one per seed from S on (default 200)
  --seed S           the first seed (default: chosen from the time and printed)
  --path P           with --seed: replay the counterexample fast-check printed, and print its trace
  --only PROPERTY    check one property (${Object.keys(PROPERTIES).join(", ")})
  --save FILE        with --path and --only: write the schedule to FILE, a regression every test run replays
                     (test/simulation/regressions/NAME.json)
  --shrink-seconds T time to shrink the first counterexample of each property (default 30; 0: none)
  --no-spawn         programs without steps that start workflows (whose known bug hides others)
  --cluster          the cluster simulation instead: engine processes on one PostgreSQL (--cluster --help)`;

interface Args {
  seeds: number;
  seed: number | undefined;
  path: string | undefined;
  only: Property | undefined;
  shrinkSeconds: number;
  space: ProgramSpace;
  flows: boolean;
  onlyName: string | undefined;
  save: string | undefined;
}

function parse(argv: readonly string[]): Args {
  const args: Args = {
    seeds: 200,
    seed: undefined,
    path: undefined,
    only: undefined,
    shrinkSeconds: 30,
    space: FULL_SPACE,
    flows: false,
    onlyName: undefined,
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
    else if (flag === "--only") {
      const p = need();
      args.onlyName = p;
      if (argv.includes("--flows")) continue;
      if (!(p in PROPERTIES)) throw new Error(`no property '${p}'\n${USAGE}`);
      args.only = p as Property;
    } else if (flag === "--shrink-seconds") args.shrinkSeconds = Number(need());
    else if (flag === "--no-spawn") args.space = { ...args.space, spawn: false };
    else if (flag === "--help" || flag === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown argument ${flag}\n${USAGE}`);
  }
  if (!Number.isInteger(args.seeds) || args.seeds < 1) throw new Error(`--seeds needs a whole number ≥ 1\n${USAGE}`);
  return args;
}

async function replayOne(args: Args & { seed: number }): Promise<number> {
  const { schedule, report, error } = await replay(args.seed, args.path, args.only, args.space);
  console.log(`seed ${args.seed}${args.path ? `, path ${args.path}` : ""}:${scheduleText(schedule)}`);
  for (const line of report?.trace ?? (error instanceof Violation ? error.trace : [])) console.log(line);
  const violations = error !== undefined ? [error] : (report?.violations ?? []);
  for (const v of violations) console.log(`\n${v instanceof Error ? (v.stack ?? v.message) : String(v)}`);
  if (args.save !== undefined) {
    if (args.only === undefined) throw new Error(`--save needs --only: a regression checks one property\n${USAGE}`);
    const first = violations[0];
    saveRegression(args.save, {
      property: args.only,
      found: first instanceof Error ? first.message : String(first ?? "nothing (it passed when saved)"),
      schedule,
    });
    console.log(`\nsaved to ${args.save}`);
  }
  return violations.length === 0 ? 0 : 1;
}

async function explore(args: Args): Promise<number> {
  const first = args.seed ?? Date.now() % 1_000_000_000;
  console.log(`checking ${args.seeds} schedules, seeds ${first}..${first + args.seeds - 1}`);
  const firstSeeds = new Map<Property, { seed: number; message: string }>();
  const failingSeeds = new Map<Property, number[]>();
  const counts = new Map<Property, number>();
  const crashes: Array<{ seed: number; error: unknown }> = [];
  const began = Date.now();
  let lastReport = began;
  let actions = 0;
  for (let i = 0; i < args.seeds; i++) {
    const seed = first + i;
    const outcome = await scanSeed(seed, args.space);
    if (outcome.crash !== undefined) crashes.push({ seed, error: outcome.crash });
    for (const v of outcome.violations) {
      if (args.only !== undefined && v.property !== args.only) continue;
      counts.set(v.property, (counts.get(v.property) ?? 0) + 1);
      failingSeeds.set(v.property, [...(failingSeeds.get(v.property) ?? []), seed]);
      if (!firstSeeds.has(v.property)) firstSeeds.set(v.property, { seed, message: v.message });
    }
    actions += outcome.actions;
    const now = Date.now();
    if (now - lastReport > 5_000 || i === args.seeds - 1) {
      lastReport = now;
      const rate = (i + 1) / ((now - began) / 1000);
      const failing = [...counts].map(([p, n]) => `${p} ${n}`).join(", ") || "none";
      console.log(
        `${i + 1}/${args.seeds} schedules, ${rate.toFixed(1)}/s (${Math.round(rate * 3600)}/h), ${actions} actions; violations by property: ${failing}`,
      );
    }
  }
  const seconds = (Date.now() - began) / 1000;
  console.log(
    `\n${args.seeds} schedules in ${seconds.toFixed(1)} s: ${(args.seeds / seconds).toFixed(2)} schedules/s, ${Math.round((args.seeds / seconds) * 3600)} schedules/h`,
  );
  for (const c of crashes)
    console.log(`\nseed ${c.seed}: the harness failed: ${c.error instanceof Error ? c.error.stack : String(c.error)}`);
  for (const [property, { seed, message }] of firstSeeds) {
    console.log(`\n${counts.get(property)} schedule(s) violate "${PROPERTIES[property]}"; first: seed ${seed}: ${message}`);
    console.log(`  seeds: ${(failingSeeds.get(property) ?? []).join(", ")}`);
    if (args.shrinkSeconds <= 0) continue;
    const shrunk = await shrink(seed, property, args.shrinkSeconds * 1000, args.space);
    console.log(shrunk === undefined ? `  (seed ${seed} did not fail again when checked for this property alone)` : shrunkText(shrunk));
  }
  return firstSeeds.size === 0 && crashes.length === 0 ? 0 : 1;
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
  if (args.flows) process.exit(await flowsMain({ ...args, only: args.onlyName }));
  const code = args.path !== undefined && args.seed !== undefined ? await replayOne({ ...args, seed: args.seed }) : await explore(args);
  process.exit(code);
}

await main();
