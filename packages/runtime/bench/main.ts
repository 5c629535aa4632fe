import { runFlowBench } from "./flow-bench.js";
import { runLogBench } from "./log-bench.js";
import { runStepsBench } from "./steps-bench.js";
import { runListBench } from "./list-bench.js";

/** Benchmarks by sub-command: `npm run bench -- <name> [--json]`. Add one line per benchmark. */
const commands: Record<string, (args: readonly string[]) => Promise<void>> = {
  crc: async (args) => (await import("./crc-bench.js")).runCrcBench(args),
  codec: async (args) => (await import("./codec-bench.js")).runCodecBench(args),
  faults: async (args) => (await import("./pg-faults.js")).runFaultBench(args),
  "first-open": async (args) => (await import("./first-open-bench.js")).runFirstOpenBench(args),
  flow: runFlowBench,
  log: runLogBench,
  pg: async (args) => (await import("./pg-bench.js")).runPgBench(args),
  steps: runStepsBench,
  list: runListBench,
};

const [name, ...args] = process.argv.slice(2);
const command = name === undefined ? undefined : commands[name];
if (command === undefined) {
  process.stderr.write(`usage: npm run bench -- <${Object.keys(commands).join("|")}> [--json]\n`);
  process.exitCode = 2;
} else {
  await command(args);
}
