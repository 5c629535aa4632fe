import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

const PROCESS = new URL("./engine-process.js", import.meta.url);

/** An error an engine process answered with, or the loss of the process before it answered. */
export class CallFailed extends Error {
  constructor(
    readonly errorName: string,
    message: string,
    /** The process died (or was killed) before it answered: the call may or may not have happened. */
    readonly lost: boolean,
    /** A `RejectedError`'s reason (`already-finished`, ...). */
    readonly reason?: string,
  ) {
    super(message);
    this.name = "CallFailed";
  }
}

export interface EngineArgs {
  readonly url: string;
  readonly schema: string;
  readonly owner: string;
  readonly leaseMs: number;
  readonly skewMs: number;
  readonly forwardTimeoutMs: number;
  readonly shards: number;
}

/** How long a call waits for its process's answer: far longer than any call of a healthy cluster takes. */
const ANSWER_MS = 30_000;

/** An engine process of the simulated cluster, driven over its stdin. */
export class EngineHandle {
  readonly process: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  paused = false;
  private stderr = "";
  private next = 0;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  constructor(readonly args: EngineArgs) {
    const argv = [args.url, args.schema, args.owner, args.leaseMs, args.skewMs, args.forwardTimeoutMs, args.shards].map(String);
    this.process = spawn(process.execPath, ["--no-warnings", PROCESS.pathname, ...argv], { stdio: ["pipe", "pipe", "pipe"] });
    this.process.stderr!.setEncoding("utf8").on("data", (d: string) => (this.stderr = (this.stderr + d).slice(-4000)));
    // A killed process's pipe may still be written to by a call sent just before; that is expected.
    this.process.stdin!.on("error", () => undefined);
    this.exited = new Promise((resolve) => this.process.on("close", () => resolve()));
    this.ready = new Promise((resolve, reject) => {
      createInterface({ input: this.process.stdout! }).on("line", (text) => {
        if (text === "ready") return resolve();
        const m = JSON.parse(text) as { n: number; ok: boolean; value?: unknown; name?: string; message?: string; reason?: string };
        const w = this.waiting.get(m.n);
        this.waiting.delete(m.n);
        if (m.ok) w?.resolve(m.value);
        else w?.reject(new CallFailed(m.name ?? "Error", m.message ?? "", false, m.reason));
      });
      // `exited` settles when the process ends and never rejects.
      this.exited.then(
        () => {
          reject(new Error(`engine process ${args.owner} exited (${this.ending}): ${this.stderr}`));
          for (const w of this.waiting.values()) w.reject(new CallFailed("ProcessLost", `engine process ${args.owner} is gone`, true));
          this.waiting.clear();
        },
        () => undefined,
      );
    });
    this.ready.catch(() => undefined);
  }

  get owner(): string {
    return this.args.owner;
  }

  get alive(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  /**
   * Sends a command and resolves with the process's answer. A process that does not answer within
   * {@link ANSWER_MS} fails the call as in doubt: the checks that follow report what it left undone,
   * where an unbounded wait would hang the whole run.
   */
  send<T = unknown>(command: Record<string, unknown>): Promise<T> {
    if (!this.alive) return Promise.reject(new CallFailed("ProcessLost", `engine process ${this.owner} is gone`, true));
    const n = ++this.next;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(n);
        reject(
          new CallFailed("NoAnswer", `engine process ${this.owner} did not answer ${command.op as string} within ${ANSWER_MS} ms`, true),
        );
      }, ANSWER_MS);
      const settle =
        <A>(f: (a: A) => void) =>
        (a: A): void => {
          clearTimeout(timer);
          f(a);
        };
      this.waiting.set(n, { resolve: settle(resolve as (v: unknown) => void), reject: settle(reject) });
      this.process.stdin!.write(`${JSON.stringify({ n, ...command })}\n`);
    });
  }

  /** Stops the process where it is, as a scheduler or a hypervisor would (its sockets stay open). */
  pause(): void {
    if (!this.alive || this.paused) return;
    this.paused = true;
    this.process.kill("SIGSTOP");
  }

  resume(): void {
    if (!this.alive || !this.paused) return;
    this.paused = false;
    this.process.kill("SIGCONT");
  }

  /** SIGKILLs the process and waits until it is gone. */
  async kill(): Promise<void> {
    if (this.alive) {
      this.process.kill("SIGKILL");
      if (this.paused) this.process.kill("SIGCONT");
    }
    await this.exited;
  }

  /** What the process wrote to its stderr lately. */
  get errors(): string {
    return this.stderr;
  }

  /** How the process ended, as the operating system told: its exit code, or the signal that ended it. */
  get ending(): string {
    return this.process.signalCode !== null ? `signal ${this.process.signalCode}` : `exit code ${String(this.process.exitCode)}`;
  }
}
