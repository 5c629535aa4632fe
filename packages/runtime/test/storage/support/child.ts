import { type ChildProcess, spawn } from "node:child_process";

/** A compiled fixture script running in its own Node process. */
export interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  /** Resolves when the script printed `ready`; rejects if it exits first. */
  readonly ready: Promise<void>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Starts `script` (a URL of a compiled fixture) with `process.execPath`. */
export function startChild(script: URL, args: readonly string[]): Child {
  const child = spawn(process.execPath, [script.pathname, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stderr })),
  );
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (stdout.includes("ready\n")) resolve();
    });
    child.on("close", (code, signal) => reject(new Error(`${script.pathname} exited (${code ?? signal}) before it was ready: ${stderr}`)));
  });
  ready.catch(() => undefined);
  return { process: child, pid: child.pid!, ready, exited };
}

/** Kills the child with SIGKILL and waits until it is gone. */
export async function killHard(child: Child): Promise<void> {
  child.process.kill("SIGKILL");
  await child.exited;
}
