import { runCli } from "../../src/cli.js";
import type { Io } from "../../src/io.js";

/** What a `fusee` command printed and its exit code. */
export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `fusee ...args` in this process; `terminal` makes standard error a terminal of 100 columns. */
export async function inProcess(args: readonly string[], terminal = false): Promise<Outcome> {
  let stdout = "";
  let stderr = "";
  const io: Io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: Object.assign({ write: (text: string) => (stderr += text) }, terminal ? { isTTY: true, columns: 100 } : {}),
    color: false,
    cwd: process.cwd(),
    interrupted: () => new Promise<void>(() => undefined),
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}

/** Runs `fusee ...args` in this process. */
export function fusee(...args: string[]): Promise<Outcome> {
  return inProcess(args);
}
