import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type pg from "pg";

const WORKER = new URL("./pg-steps-worker.js", import.meta.url);

/** Settings every engine process of one benchmark cluster shares. */
export interface ClusterSettings {
  readonly url: string;
  readonly schema: string;
  readonly leaseMs: number;
  readonly shards: number;
  /** Node options of every engine process, before the script. */
  readonly nodeOptions: readonly string[];
}

/** An engine process of the benchmark, driven by JSON commands over its stdin. */
export class BenchWorker {
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  private readonly child: ChildProcess;
  private stderr = "";
  private next = 0;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  constructor(
    readonly owner: string,
    s: ClusterSettings,
  ) {
    this.child = spawn(process.execPath, [...s.nodeOptions, WORKER.pathname, s.url, s.schema, owner, String(s.leaseMs), String(s.shards)], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stderr!.setEncoding("utf8").on("data", (d: string) => (this.stderr = (this.stderr + d).slice(-4_000)));
    this.exited = new Promise((resolve) => this.child.on("close", () => resolve()));
    this.ready = new Promise((resolve, reject) => {
      createInterface({ input: this.child.stdout! }).on("line", (text) => {
        if (text === "ready") return resolve();
        const m = JSON.parse(text) as { n: number; ok: boolean; value?: unknown; message?: string };
        const w = this.waiting.get(m.n);
        this.waiting.delete(m.n);
        if (m.ok) w?.resolve(m.value);
        else w?.reject(new Error(`${owner}: ${m.message}`));
      });
      this.child.on("close", () => {
        const error = new Error(`benchmark engine process ${owner} exited: ${this.stderr.trim() || "(no output)"}`);
        reject(error);
        for (const w of this.waiting.values()) w.reject(error);
        this.waiting.clear();
      });
    });
    this.ready.catch(() => undefined);
  }

  /** Sends a command and resolves with the process's answer. */
  send<T>(command: Record<string, unknown>): Promise<T> {
    const n = ++this.next;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(n, { resolve: resolve as (v: unknown) => void, reject });
      this.child.stdin!.write(`${JSON.stringify({ n, ...command })}\n`);
    });
  }

  /** SIGKILLs the process (a crash: no lease is released) and waits until it is gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }
}

/** The live lease holder of each shard of the schema, or undefined for a free or expired lease. */
export async function holders(pool: pg.Pool, schema: string): Promise<(string | undefined)[]> {
  const { rows } = await pool.query<{ owner: string | null; live: boolean }>(
    `SELECT owner, expires_at > clock_timestamp() AS live FROM "${schema}".leases ORDER BY shard`,
  );
  return rows.map((r) => (r.live && r.owner !== null ? r.owner : undefined));
}

/**
 * Waits until every shard is held and each owner holds its even share; returns the holders and
 * the milliseconds waited. Throws after `timeoutMs`, naming the last split seen.
 */
export async function waitForSplit(
  pool: pg.Pool,
  schema: string,
  owners: readonly string[],
  timeoutMs: number,
): Promise<{ held: string[]; ms: number }> {
  const t0 = performance.now();
  let held: (string | undefined)[] = [];
  while (performance.now() - t0 < timeoutMs) {
    held = await holders(pool, schema).catch(() => []);
    const share = held.length / owners.length;
    const even = held.length > 0 && owners.every((o) => held.filter((h) => h === o).length === share);
    if (even) return { held: held as string[], ms: Math.round(performance.now() - t0) };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`shards were not split evenly among ${owners.join(", ")} within ${timeoutMs} ms; holders: ${JSON.stringify(held)}`);
}
