import { fork, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "ui-writer-process.js");

interface Answer {
  readonly n: number;
  readonly ok: boolean;
  readonly value?: unknown;
  readonly error?: string;
}

/** An engine running in a child process on a data directory, so the UI reads what another process writes. */
export class WriterProcess {
  private n = 0;
  private readonly waiting = new Map<number, (answer: Answer) => void>();

  private constructor(private readonly child: ChildProcess) {
    child.on("message", (m) => {
      const answer = m as Answer;
      this.waiting.get(answer.n)?.(answer);
      this.waiting.delete(answer.n);
    });
  }

  /** Starts the process on `dir` and resolves once its engine is open. */
  static async start(dir: string): Promise<WriterProcess> {
    const child = fork(SCRIPT, [dir], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    await new Promise<void>((resolve, reject) => {
      child.once("message", () => resolve());
      child.once("exit", (code) => reject(new Error(`the writer process exited with ${code} before its engine opened`)));
    });
    child.removeAllListeners("exit");
    return new WriterProcess(child);
  }

  /** Performs one operation in the child (see `ui-writer-process.ts`) and gives back its value. */
  async call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    const n = ++this.n;
    const answer = await new Promise<Answer>((resolve) => {
      this.waiting.set(n, resolve);
      this.child.send({ n, op, ...args });
    });
    if (!answer.ok) throw new Error(`${op} failed in the writer process: ${answer.error}`);
    return answer.value as T;
  }

  /** Shuts its engine down and waits for the process to exit. */
  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    await this.call("shutdown").catch(() => undefined);
    await exited;
  }
}
