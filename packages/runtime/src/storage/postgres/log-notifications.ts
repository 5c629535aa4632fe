/*
 * The wake-ups a PostgreSQL log hands its subscribers: a NOTIFY for a shard this process holds, a
 * NOTIFY naming this process, and a poll on an interval (and after the listening connection came
 * back) that tells them to look for work they may have missed.
 */
import type pg from "pg";
import type { Driver } from "./driver.js";
import { emit } from "./shard-leases.js";
import { WakeListener } from "./notify.js";

/** Called for a wake-up of an owned shard; `payload` is undefined for a poll (look for missed work). */
export type NotifyListener = (shard: number, payload: string | undefined) => void;

/** The shard number of wake-ups addressed to a process by its owner name rather than to a shard. */
export const OWNER_WAKE_SHARD = -1;

export interface NotificationsParts {
  readonly driver: Driver;
  readonly connection: pg.ClientConfig;
  readonly channel: string;
  readonly owner: string;
  readonly pollMs: number;
  /** The shards this process holds now. */
  owned(): number[];
  /** Whether this process holds `shard` now. */
  holds(shard: number): boolean;
}

export class LogNotifications {
  private readonly shardListeners = new Set<NotifyListener>();
  private readonly ownerListeners = new Set<() => void>();
  private listener: WakeListener | undefined;
  private listening: Promise<void> | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly p: NotificationsParts) {}

  onShard(listener: NotifyListener): Promise<() => void> {
    return this.subscribe(this.shardListeners, listener);
  }

  onOwner(listener: () => void): Promise<() => void> {
    return this.subscribe(this.ownerListeners, listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pollTimer);
    await this.listener?.close();
  }

  /** Adds a listener of wake-ups once this process listens on the schema's channel. */
  private async subscribe<L>(listeners: Set<L>, listener: L): Promise<() => void> {
    listeners.add(listener);
    this.listening ??= this.listen();
    try {
      await this.listening;
    } catch (err) {
      listeners.delete(listener);
      this.listening = undefined;
      throw err;
    }
    return () => listeners.delete(listener);
  }

  private async listen(): Promise<void> {
    const listener = new WakeListener(this.p.driver, this.p.connection, this.p.channel, {
      message: (shard, payload) => {
        if (shard === OWNER_WAKE_SHARD) {
          if (payload === this.p.owner) emit(this.ownerListeners, (l) => l());
        } else if (this.p.holds(shard)) emit(this.shardListeners, (l) => l(shard, payload));
      },
      reconnected: () => this.poll(),
    });
    await listener.start();
    if (this.closed) {
      await listener.close();
      return;
    }
    this.listener = listener;
    this.pollTimer = setInterval(() => this.poll(), this.p.pollMs);
    this.pollTimer.unref();
  }

  private poll(): void {
    for (const shard of this.p.owned()) emit(this.shardListeners, (l) => l(shard, undefined));
  }
}
