#!/usr/bin/env node
import { runCli } from "./cli.js";
import { processIo } from "./io.js";

// A reader that stops early (`fusee list | head`) closes the pipe; that is not an error of ours.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw e;
});
process.exitCode = await runCli(process.argv.slice(2), processIo());
