#!/usr/bin/env node
/* global process, console, setInterval, clearInterval */
// `npm start`: builds the workspace, telling what it compiles (a fresh clone takes a while, and
// silence reads as a hang), then runs the order-fulfilment example with the arguments given.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;

function build() {
  console.log("fusee: building the packages and examples (tsc -b; about 20-90 s on a fresh clone, a few seconds after that)");
  const tsc = spawn(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-b", "--verbose"], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const errors = [];
  let compiled = 0;
  createInterface({ input: tsc.stdout }).on("line", (line) => {
    const building = /Building project '([^']+)'/.exec(line);
    if (building) {
      compiled++;
      console.log(`  compiling ${relative(root, dirname(building[1])) || "."} (${elapsed()})`);
    } else if (/error TS\d+/.test(line) || (errors.length > 0 && line.startsWith(" "))) {
      errors.push(line);
    }
  });
  // A long project still shows life: one line every 10 s while tsc works on it.
  const ticker = setInterval(() => console.log(`  ... still compiling (${elapsed()})`), 10_000);
  return new Promise((resolve) => {
    tsc.on("exit", (code) => {
      clearInterval(ticker);
      for (const line of errors) console.error(line);
      console.log(
        code === 0
          ? `fusee: built ${compiled === 0 ? "(everything was up to date)" : `${compiled} project${compiled === 1 ? "" : "s"}`} in ${elapsed()}`
          : "fusee: the build failed",
      );
      resolve(code ?? 1);
    });
  });
}

const code = await build();
if (code !== 0) process.exit(code);
console.log("fusee: running examples/orders (node dist/src/main.js)\n");
const example = spawn(process.execPath, ["dist/src/main.js", ...process.argv.slice(2)], {
  cwd: join(root, "examples/orders"),
  stdio: "inherit",
});
// Ctrl-C reaches the example through the terminal; this process only waits for it to stop.
process.on("SIGINT", () => undefined);
example.on("exit", (exitCode, signal) => process.exit(exitCode ?? (signal === "SIGINT" ? 130 : 1)));
