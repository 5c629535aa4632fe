import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { reportError, UsageError } from "../data-dir.js";
import { ExitCode } from "../exit-codes.js";
import type { Io } from "../io.js";
import type { CommandContext } from "./command-context.js";

/**
 * The benchmarks of `@fusee/runtime`'s bench/main.ts, in its order. A test checks the two lists
 * agree, so a benchmark added there must be added here.
 */
export const BENCHMARKS: Readonly<Record<string, string>> = {
  codec: "durable steps with and without payload encryption (aesGcm)",
  crc: "the log's checksum: native (@node-rs/crc32) against the pure JavaScript table loop",
  "first-open": "opening a fresh data directory: time, and the disk it takes before any run",
  flow: "permit hand-offs of a limit and a backfill of 1,000,000 schedule instants",
  log: "append latency of the local log against the disk's floor",
  pg: "the PostgreSQL log against one INSERT ... COMMIT per record ($FUSEE_BENCH_PG_URL)",
  steps: "durable steps on the local engine against the disk's floor (--engine postgres: PostgreSQL cluster)",
  list: "engine.listWhere over 100,000 finished runs with search attributes",
  faults: "a PostgreSQL cluster under SIGKILL, terminated sessions and pauses: failover, re-runs, a limit's bound ($FUSEE_TEST_PG_URL)",
};

/** `fusee bench`: runs a benchmark of the runtime in a child process, as `npm run bench -- NAME` does. */
export function benchCommand(program: Command, context: CommandContext): void {
  program
    .command("bench")
    .description("Run one of the runtime's benchmarks, as `npm run bench -- NAME` does (most take minutes).")
    .argument("[name]", `the benchmark: ${Object.keys(BENCHMARKS).join(", ")}`)
    .argument("[args...]", "passed on to the benchmark, e.g. --engine postgres")
    .option("--json", "print the benchmark's results as JSON")
    .allowUnknownOption()
    .addHelpText("after", `\nBenchmarks:\n${benchmarkList()}`)
    .action(async (name: string | undefined, args: string[], flags: { json?: boolean }) => {
      context.exitCode = await runBench(name, args, flags.json === true, context.io);
    });
}

async function runBench(name: string | undefined, args: readonly string[], json: boolean, io: Io): Promise<number> {
  if (name === undefined) {
    io.stderr.write(`usage: fusee bench <name> [--json]\n\nBenchmarks:\n${benchmarkList()}\n`);
    return ExitCode.Usage;
  }
  try {
    if (!Object.hasOwn(BENCHMARKS, name)) {
      throw new UsageError(`there is no benchmark '${name}'; choose one of ${Object.keys(BENCHMARKS).join(", ")}`);
    }
    const main = benchMain();
    const forwarded = json && !args.includes("--json") ? [...args, "--json"] : args;
    return await new Promise<number>((resolve, reject) => {
      // Ctrl-C reaches the benchmark too; listening for it here keeps this process alive until the
      // benchmark exits, so the benchmark's exit code is ours.
      io.interrupted().catch(reject);
      const child = spawn(process.execPath, ["--expose-gc", main, name, ...forwarded], { stdio: "inherit" });
      child.on("error", reject);
      child.on("exit", (code) => resolve(code ?? ExitCode.Failed));
    });
  } catch (e) {
    return reportError(io, "bench", e, json);
  }
}

function benchmarkList(): string {
  const width = Math.max(...Object.keys(BENCHMARKS).map((n) => n.length));
  return Object.entries(BENCHMARKS)
    .map(([name, what]) => `  ${name.padEnd(width)}  ${what}`)
    .join("\n");
}

/**
 * The compiled benchmark entry point of the installed `@fusee/runtime`. Its package exports only
 * the library, so the package folder is found from the library's entry.
 *
 * @throws UsageError when the runtime was installed without its benchmarks (they are not published).
 */
export function benchMain(): string {
  const entry = createRequire(import.meta.url).resolve("@fusee/runtime");
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (!existsSync(manifest) || (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name !== "@fusee/runtime") continue;
    const main = join(dir, "dist", "bench", "main.js");
    if (existsSync(main)) return main;
    throw new UsageError(`the benchmarks are not built in ${dir}: run \`npx tsc -b\` in the fusee repository (they are not published)`);
  }
  throw new UsageError(`cannot find the folder of @fusee/runtime from ${entry}`);
}
