import { readFileSync } from "node:fs";
import { singleSimulation } from "../explore.js";
import { Violation, type Property } from "../properties.js";
import * as scanner from "../seed-scanner.js";
import { runtimeLocation, type ProbeReport } from "./report.js";

interface ProbeArgs {
  first: number;
  seeds: number;
  shrinkMs: number;
  baseline: boolean;
  /** A JSON file of `seed:property` failures that do not count (the baseline's). */
  ignore: string | undefined;
}

function parse(argv: readonly string[]): ProbeArgs {
  const args: ProbeArgs = { first: 1, seeds: 1, shrinkMs: 10_000, baseline: false, ignore: undefined };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--first") args.first = Number(value());
    else if (flag === "--seeds") args.seeds = Number(value());
    else if (flag === "--shrink-ms") args.shrinkMs = Number(value());
    else if (flag === "--ignore") args.ignore = value();
    else if (flag === "--baseline") args.baseline = true;
    else throw new Error(`unknown argument ${flag}`);
  }
  return args;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

async function probe(args: ProbeArgs): Promise<ProbeReport> {
  const generator = "single-process";
  const runtime = runtimeLocation();
  const ignored = new Set<string>(args.ignore === undefined ? [] : (JSON.parse(readFileSync(args.ignore, "utf8")) as string[]));
  const failures: string[] = [];
  const began = Date.now();
  for (let i = 0; i < args.seeds; i++) {
    const seed = args.first + i;
    const outcome = await scanner.scanSeed(singleSimulation(), seed);
    const found: Array<{ property: Property | "crash"; message: string }> = outcome.violations.map((v) => ({
      property: v.property,
      message: v.message,
    }));
    if (outcome.crash !== undefined) found.push({ property: "crash", message: message(outcome.crash) });
    const fresh = found.filter((f) => !ignored.has(`${seed}:${f.property}`));
    if (args.baseline) {
      failures.push(...fresh.map((f) => `${seed}:${f.property}`));
      continue;
    }
    const first = fresh[0];
    if (first === undefined) continue;
    const seconds = (Date.now() - began) / 1000;
    const caught = { seed, property: first.property, message: first.message };
    if (first.property === "crash") return { generator, runtime, seeds: i + 1, seconds, caught };
    return {
      generator,
      runtime,
      seeds: i + 1,
      seconds,
      caught: { ...caught, shrunk: await shrinkAndReplay(seed, first.property, args.shrinkMs) },
    };
  }
  const seconds = (Date.now() - began) / 1000;
  return args.baseline ? { generator, runtime, seeds: args.seeds, seconds, failures } : { generator, runtime, seeds: args.seeds, seconds };
}

/** Shrinks the counterexample, then replays it the way its reproduction line says. */
async function shrinkAndReplay(seed: number, property: Property, ms: number): Promise<NonNullable<ProbeReport["caught"]>["shrunk"]> {
  const shrunk = await scanner.shrink(singleSimulation(), seed, property, ms);
  if (shrunk === undefined) return undefined;
  const again = await scanner.replay(singleSimulation(), seed, shrunk.path, property);
  const replayed =
    again.error instanceof Violation && again.error.property === property
      ? again.error.message
      : again.report?.violations.find((v) => v.property === property)?.message;
  return {
    path: shrunk.path,
    shrinks: shrunk.shrinks,
    actions: shrunk.input.actions.length,
    violation: shrunk.violation,
    replayed,
  };
}

const report = await probe(parse(process.argv.slice(2)));
process.stdout.write(`${JSON.stringify(report)}\n`);
process.exit(0);
