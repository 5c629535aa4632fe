import { runCli } from "../../src/cli.js";
import type { Io } from "../../src/io.js";

/** `fusee ui` started in this process, stopped as Ctrl-C would stop it. */
export interface RunningUi {
  readonly url: string;
  readonly output: () => string;
  stop(): Promise<number>;
}

export async function startUi(...args: string[]): Promise<RunningUi> {
  let stdout = "";
  let interrupt = (): void => undefined;
  const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
  const io: Io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stdout += text) },
    color: false,
    cwd: process.cwd(),
    interrupted: () => interrupted,
  };
  const exit = runCli(["ui", ...args], io);
  let settled: string | undefined;
  exit.then(
    (code) => (settled = `exited with ${code}`),
    (e: unknown) => (settled = `failed: ${(e as Error)?.message ?? String(e)}`),
  );
  for (;;) {
    const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(stdout)?.[0];
    if (url !== undefined) {
      return {
        url,
        output: () => stdout,
        stop: () => {
          interrupt();
          return exit;
        },
      };
    }
    if (settled !== undefined) throw new Error(`fusee ui ${settled}: ${stdout}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
