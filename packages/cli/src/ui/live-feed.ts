import type { ServerResponse } from "node:http";
import type { DataDirRun } from "@fusee/runtime";
import type { ReaderSource } from "./routes.js";

/** What `/api/events` sends, as the data of an event named `run`. */
export interface RunEvent {
  readonly kind: "run-started" | "status-changed" | "records-added";
  readonly id: string;
  readonly type: string;
  readonly runId: number;
  readonly status: string;
  readonly records: number;
}

type Seen = Pick<DataDirRun, "runId" | "status" | "records">;

// Comments keep proxies and the browser from dropping a quiet stream.
const KEEP_ALIVE_MS = 15_000;

/**
 * Server-sent events of the runs of a data directory that an engine may be writing: while anyone
 * listens, the directory is read every `pollMs` and what changed since the last read is sent (a run
 * started, its status changed, records were added). Reading is all it does: it works beside an
 * engine in another process.
 */
export class LiveFeed {
  private readonly clients = new Set<ServerResponse>();
  private seen: Map<string, Seen> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly open: ReaderSource,
    private readonly pollMs: number,
  ) {}

  /** Makes `response` a stream of events until the client goes away. */
  subscribe(response: ServerResponse, headers: Readonly<Record<string, string>>): void {
    response.writeHead(200, { ...headers, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
    response.write(`retry: 1000\n: following the data directory\n\n`);
    this.clients.add(response);
    response.on("close", () => {
      this.clients.delete(response);
      if (this.clients.size === 0) this.stop();
    });
    this.start();
  }

  /** Ends every stream (the server is closing). */
  close(): void {
    for (const c of this.clients) c.end();
    this.clients.clear();
    this.stop();
  }

  private start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.pollSoon(), this.pollMs);
    this.keepAlive = setInterval(() => this.broadcast(": keep-alive\n\n"), KEEP_ALIVE_MS);
    this.pollSoon();
  }

  private stop(): void {
    clearInterval(this.timer);
    clearInterval(this.keepAlive);
    this.timer = this.keepAlive = undefined;
    this.seen = undefined;
  }

  private pollSoon(): void {
    this.poll().catch((e: unknown) => this.failure(e));
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const reader = await this.open();
      let runs: DataDirRun[];
      try {
        runs = reader.list({}, Number.MAX_SAFE_INTEGER);
      } finally {
        await reader.close();
      }
      const before = this.seen;
      const now = new Map<string, Seen>(runs.map((r) => [r.id, { runId: r.runId, status: r.status, records: r.records }]));
      this.seen = now;
      if (before === undefined) return;
      for (const r of runs) {
        const was = before.get(r.id);
        const kind =
          was === undefined || was.runId !== r.runId
            ? "run-started"
            : was.status !== r.status
              ? "status-changed"
              : was.records !== r.records
                ? "records-added"
                : undefined;
        if (kind === undefined) continue;
        const event: RunEvent = { kind, id: r.id, type: r.type, runId: r.runId, status: r.status, records: r.records };
        this.broadcast(`event: run\ndata: ${JSON.stringify(event)}\n\n`);
      }
    } catch (e) {
      this.failure(e);
    } finally {
      this.polling = false;
    }
  }

  private failure(e: unknown): void {
    this.broadcast(`event: failure\ndata: ${JSON.stringify({ message: (e as Error)?.message ?? String(e) })}\n\n`);
  }

  private broadcast(text: string): void {
    for (const c of this.clients) c.write(text);
  }
}
