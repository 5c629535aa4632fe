import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { PG_URL, sql } from "./database.js";
import { eventually } from "../../support/wait.js";

const WORKER = new URL("../fixtures/cluster-worker.js", import.meta.url);

/** An engine process of a cluster, driven by commands over its stdin. */
export class ClusterWorker {
  readonly process: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  private stderr = "";
  private next = 0;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  constructor(
    readonly owner: string,
    args: { url: string; schema: string; leaseMs: number; stepLog: string; env?: Record<string, string> },
  ) {
    this.process = spawn(process.execPath, [WORKER.pathname, args.url, args.schema, owner, String(args.leaseMs), args.stepLog], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ...args.env },
    });
    this.process.stderr!.setEncoding("utf8").on("data", (d: string) => (this.stderr += d));
    this.exited = new Promise((resolve) => this.process.on("close", () => resolve()));
    this.ready = new Promise((resolve, reject) => {
      createInterface({ input: this.process.stdout! }).on("line", (text) => {
        if (text === "ready") return resolve();
        const m = JSON.parse(text) as { n: number; ok: boolean; value?: unknown; name?: string; message?: string; reason?: string };
        const w = this.waiting.get(m.n);
        this.waiting.delete(m.n);
        if (m.ok) w?.resolve(m.value);
        else w?.reject(Object.assign(new Error(`${owner}: ${m.message}`), { name: m.name, reason: m.reason }));
      });
      this.process.on("close", () => {
        const error = new Error(`cluster worker ${owner} exited: ${this.stderr}`);
        reject(error);
        for (const w of this.waiting.values()) w.reject(error);
        this.waiting.clear();
      });
    });
    this.ready.catch(() => undefined);
  }

  /** What the worker wrote to its stderr so far (process warnings among it). */
  get errors(): string {
    return this.stderr;
  }

  /** Sends a command and resolves with the worker's answer. */
  send<T = unknown>(command: Record<string, unknown>): Promise<T> {
    const n = ++this.next;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(n, { resolve: resolve as (v: unknown) => void, reject });
      this.process.stdin!.write(`${JSON.stringify({ n, ...command })}\n`);
    });
  }

  /** SIGKILLs the worker and waits until it is gone. */
  async kill(): Promise<void> {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill("SIGKILL");
    await this.exited;
  }
}

/** The live lease holder of each shard of the schema (undefined for a free or expired lease). */
export async function holders(schema: string): Promise<(string | undefined)[]> {
  const rows = await sql<{ shard: number; owner: string | null; live: boolean }>(
    `SELECT shard, owner, expires_at > clock_timestamp() AS live FROM "${schema}".leases ORDER BY shard`,
  );
  return rows.map((r) => (r.live && r.owner !== null ? r.owner : undefined));
}

/** Lines of the step log: `exec|ack <id> <step> <owner>`; acknowledged steps that were executed again. */
export function rerunsAfterAck(lines: readonly string[]): string[] {
  const acked = new Set<string>();
  const violations: string[] = [];
  for (const l of lines) {
    const [kind, id, step] = l.split(" ") as [string, string, string];
    const key = `${id} ${step}`;
    if (kind === "ack") acked.add(key);
    else if (kind === "exec" && acked.has(key)) violations.push(l);
  }
  return violations;
}

/** Two engine processes `A` and `B` on a fresh schema, and the step log they share. */
export interface ClusterPair {
  /** Starts an engine process on `schema` writing to the shared step log; killed after the test. */
  spawn(owner: string, schema: string, env?: Record<string, string>): Promise<ClusterWorker>;
  /** Starts `A`, then `B` (with `envOfB`), and waits until each holds half of the `shards`. */
  start(envOfB?: Record<string, string>): Promise<[ClusterWorker, ClusterWorker, string]>;
  /** The lines the processes wrote to the shared step log so far. */
  steps(): string[];
}

/**
 * For a mocha suite of two-process clusters: a fresh step log per test, and every process killed
 * after it. `schema` hands out a fresh schema (see `useSchemas`).
 */
export function useClusterPair(schema: () => string, options: { readonly shards: number; readonly leaseMs: number }): ClusterPair {
  let workers: ClusterWorker[] = [];
  let stepLog = "";
  beforeEach(() => {
    stepLog = join(tmpdir(), `fusee-cluster-${randomBytes(4).toString("hex")}.log`);
  });
  afterEach(async () => {
    for (const w of workers) await w.kill();
    workers = [];
    if (existsSync(stepLog)) rmSync(stepLog);
  });
  const spawn = async (owner: string, name: string, env: Record<string, string> = {}): Promise<ClusterWorker> => {
    const worker = new ClusterWorker(owner, { url: PG_URL, schema: name, leaseMs: options.leaseMs, stepLog, env });
    workers.push(worker);
    await worker.ready;
    return worker;
  };
  return {
    spawn,
    async start(envOfB = {}) {
      const name = schema();
      const a = await spawn("A", name);
      const b = await spawn("B", name, envOfB);
      await eventually(
        "the shards to split evenly",
        async () => {
          const h = await holders(name);
          return h.filter((o) => o === "A").length === options.shards / 2 && h.filter((o) => o === "B").length === options.shards / 2;
        },
        15_000,
      );
      return [a, b, name];
    },
    steps: () => (existsSync(stepLog) ? readFileSync(stepLog, "utf8").split("\n").filter(Boolean) : []),
  };
}
