/*
 * The permits of limits, shared by the processes of a cluster through their database (see
 * storage/postgres/permit-table.ts). Each permit this process holds has a local deadline on the
 * monotonic clock, counted from the statement that took or last renewed it: past it, or when a
 * renewal finds it expired, the permit is lost and the attempt holding it is told, so a process
 * that was paused never goes on beside the attempts that took the place its permit had.
 */
import { randomUUID } from "node:crypto";
import { StorageError } from "../../core/errors.js";
import type { PermitTable } from "../../storage/postgres/permit-table.js";
import type { SharedGrant, SharedPermits } from "../limits.js";

interface Held {
  readonly name: string;
  deadline: number;
  readonly lost: (reason: Error) => void;
  /** Why it was lost, once it was. */
  gone?: Error;
}

export class ClusterPermits implements SharedPermits {
  /** The permits this process holds, by token. */
  private readonly held = new Map<string, Held>();
  private readonly renewal: NodeJS.Timeout;
  private renewing = false;
  private closed = false;

  constructor(
    private readonly table: PermitTable,
    private readonly holder: string,
  ) {
    // On an interval, not after the last renewal: one that hangs still leaves the deadlines checked.
    this.renewal = setInterval(() => this.tick(), Math.max(50, Math.floor(table.leaseMs / 3)));
    this.renewal.unref();
  }

  async take(
    name: string,
    concurrent: number,
    perSecond: number,
    lost: (reason: Error) => void,
  ): Promise<SharedGrant | { retryInMs: number }> {
    const token = randomUUID();
    const sentAt = performance.now();
    const wait = await this.table.take(name, token, Number.isFinite(concurrent) ? concurrent : 0, perSecond > 0 ? 1000 / perSecond : 0);
    if (wait !== 0) return { retryInMs: wait };
    if (this.closed) {
      // A permit not given back expires after the lease time; giving it back only frees it sooner.
      this.table.release([token]).catch(() => undefined);
      return { retryInMs: -1 };
    }
    const permit: Held = { name, deadline: this.deadlineFrom(sentAt), lost };
    this.held.set(token, permit);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.held.delete(token);
        // Best effort: a permit not given back expires after the lease time.
        this.table.release([token]).catch(() => undefined);
      },
      lapsed: () => {
        if (permit.gone === undefined && !released && performance.now() >= permit.deadline)
          this.lose(token, permit, "no renewal succeeded in time");
        return permit.gone;
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewal);
    await this.table.release([...this.held.keys()]).catch(() => undefined);
    this.held.clear();
    await this.table.close();
  }

  /** The permit lasts on the database from a later instant; a tenth of it is kept back, as for leases. */
  private deadlineFrom(sentAt: number): number {
    return sentAt + this.table.leaseMs - Math.min(this.table.leaseMs / 10, 1_000);
  }

  private tick(): void {
    this.expireLapsed();
    if (this.renewing || this.closed || this.held.size === 0) return;
    this.renewing = true;
    // A renewal that fails is tried again next interval; permits it could not renew lapse (`expireLapsed`).
    this.renew()
      .catch(() => undefined)
      .finally(() => (this.renewing = false));
  }

  private async renew(): Promise<void> {
    const tokens = [...this.held.keys()];
    const sentAt = performance.now();
    const renewed = await this.table.renew(tokens);
    for (const token of tokens) {
      const permit = this.held.get(token);
      if (permit === undefined) continue;
      if (renewed.has(token)) permit.deadline = Math.max(permit.deadline, this.deadlineFrom(sentAt));
      else this.lose(token, permit, "a renewal found it expired");
    }
    this.expireLapsed();
  }

  private expireLapsed(): void {
    const now = performance.now();
    for (const [token, permit] of this.held) if (now >= permit.deadline) this.lose(token, permit, "no renewal succeeded in time");
  }

  private lose(token: string, permit: Held, why: string): void {
    this.held.delete(token);
    // Best effort, as above: the permit expires in the table anyway.
    this.table.release([token]).catch(() => undefined);
    permit.lost(
      (permit.gone = new StorageError(
        `the permit of limit '${permit.name}' held by owner "${this.holder}" ran out (${why} within ${this.table.leaseMs} ms; ` +
          "the process was paused or could not reach the database), so others may hold its place: the attempt holding it is " +
          "stopped and retried under a new permit",
      )),
    );
  }
}
