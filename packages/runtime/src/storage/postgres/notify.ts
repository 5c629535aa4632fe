/*
 * Wake-ups through LISTEN/NOTIFY. One channel per schema carries `<shard>:<payload>`; every
 * listening process receives every message and keeps those for shards it owns. A notification is
 * a hint, never the only record of work: one sent while a listener is reconnecting is lost, so the
 * listener reports each reconnection (after which the owner should look for work it may have
 * missed) and the log also wakes owners on a polling interval.
 */
import type pg from "pg";
import { StorageError } from "../../core/errors.js";
import type { Driver } from "./driver.js";

/** The largest payload `notify` takes (PostgreSQL's limit is 8000 bytes for the whole message). */
const MAX_NOTIFY_BYTES = 7900;

/** What a listener tells its log. */
export interface WakeEvents {
  /** A notification for `shard` arrived. */
  message(shard: number, payload: string): void;
  /** The listener connected again after losing its connection; notifications may have been missed. */
  reconnected(): void;
}

/** The text sent on the channel for a wake-up of `shard`. */
export function encodeWake(shard: number, payload: string): string {
  if (Buffer.byteLength(payload) > MAX_NOTIFY_BYTES) {
    throw new StorageError(
      `a notification payload for shard ${shard} is longer than ${MAX_NOTIFY_BYTES} bytes; send a key and keep the data in a table`,
    );
  }
  return `${shard}:${payload}`;
}

/** A dedicated connection that LISTENs on the schema's channel and reconnects when it drops. */
export class WakeListener {
  private client: pg.Client | undefined;
  private closed = false;
  private retryMs = RETRY_MIN_MS;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly driver: Driver,
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
    private readonly events: WakeEvents,
  ) {}

  /** Connects and listens; rejects with a `StorageError` when the first connection fails. */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (err) {
      throw new StorageError(`could not LISTEN on channel "${this.channel}": ${(err as Error).message}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry !== undefined) clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new this.driver.Client(this.config);
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    client.on("notification", (n) => {
      const payload = n.payload ?? "";
      const colon = payload.indexOf(":");
      const shard = Number(payload.slice(0, colon));
      if (n.channel === this.channel && colon > 0 && Number.isInteger(shard)) this.events.message(shard, payload.slice(colon + 1));
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (err) {
      client.removeAllListeners("end");
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = RETRY_MIN_MS;
  }

  private lost(client: pg.Client): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.schedule();
  }

  private schedule(): void {
    if (this.closed || this.retry !== undefined) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connect().then(
        () => {
          if (!this.closed) this.events.reconnected();
        },
        () => {
          this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
          this.schedule();
        },
      );
    }, this.retryMs);
    this.retry.unref();
  }
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;
