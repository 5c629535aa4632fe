import { illFormed } from "../core/ids.js";
import type { Clock, ClockTimer } from "../core/clock.js";
import { ConfigError, RejectedError } from "../core/errors.js";
import type { StepOptions } from "../workflow/step-options.js";
import { PermitQueue } from "./permit-queue.js";

/**
 * A named limit on steps, declared with `engine.limit(name, spec)` and used by steps through
 * `StepOptions.limit`.
 *
 * @example
 * engine.limit("stripe", { concurrent: 2, perSecond: 10 });
 * // @Step({ limit: "stripe", priority: 1, fairness: tenantId }) async charge(...) { ... }
 */
export interface LimitSpec {
  /**
   * Step bodies running at once; unbounded when absent or 0. An attempt that timed out keeps its
   * permit until its code returns (its `ctx.abortSignal` tells it to stop), so a body that ignores
   * the signal delays the next attempt rather than running beside it.
   */
  concurrent?: number;
  /**
   * Attempts started per second, spaced evenly (`10` starts one every 100 ms), so no one-second span
   * holds more; unbounded when absent or 0. The first permit comes one interval after the limit is
   * declared, also when a restarted process declares it again, so restarts never exceed the rate.
   */
  perSecond?: number;
}

import type { PermitRequest, Release } from "../workflow/step-runner.js";

export type { Release };

/** Permits held in a store the processes of a cluster share, so a limit bounds them all together. */
export interface SharedPermits {
  /**
   * Takes a permit of the limit for one attempt: its release, or how long to wait before asking
   * again (`retryInMs` < 0: the limit is full, ask again soon; otherwise the rate's next slot).
   * `lost` is called if the permit runs out before its release (its holder could not renew it in
   * time), when other processes may already hold its place.
   */
  take(name: string, concurrent: number, perSecond: number, lost: (reason: Error) => void): Promise<SharedGrant | { retryInMs: number }>;
}

/** A permit taken from a {@link SharedPermits} store. */
export interface SharedGrant {
  readonly release: Release;
  /** Why the permit no longer holds (it ran out before it was renewed), checked at once; undefined while it holds. */
  lapsed(): Error | undefined;
}

// How soon a process asks again for a permit of a full shared limit.
const FULL_RETRY_MS = 20;

interface Waiter {
  readonly resolve: (release: Release) => void;
  /** The step gave its place up (its run was cancelled); it is passed over when its turn comes. */
  withdrawn: boolean;
  /** Told when the shared permit granted to the step runs out before the step releases it. */
  lost?: (reason: Error) => void;
  /** The shared permit granted to the step. */
  grant?: SharedGrant;
}

class Limit {
  concurrent = Infinity;
  perSecond = 0;
  inUse = 0;
  tokens = 0;
  refilledAt = 0;
  readonly queue = new PermitQueue<Waiter>();
  /** Waiters in the queue that withdrew. */
  withdrawn = 0;
  timer: ClockTimer | undefined;
  /** A shared permit is being asked for. */
  taking = false;

  constructor(readonly name: string) {}
}

/**
 * The engine's limits. Permits are in-memory state: a process that dies holds none after a
 * restart, and a step that was running under a permit takes a new one when it re-runs. A waiting
 * step costs its queue entry only. In a cluster the permits themselves are shared (see
 * {@link SharedPermits}): each process serves its own waiting steps in order (priority, then
 * fairness) and takes a shared permit for the next of them.
 *
 * A step naming a limit that was never declared fails without running (a `RejectedError` recorded
 * as the step's failure, not retried). Limits used by runs that resume on open are best declared
 * in `Engine.open(config, { limits })`, so they exist before any resumed step asks for a permit.
 */
export class Limits {
  private readonly limits = new Map<string, Limit>();
  private closed = false;
  private shared: SharedPermits | undefined;

  constructor(private readonly clock: Clock) {}

  /** Takes every permit from now on from a store shared with the other processes of a cluster. */
  share(permits: SharedPermits): void {
    this.shared = permits;
  }

  /** Declares a limit, or changes the spec of a declared one (waiting steps are served under the new spec). */
  declare(name: string, spec: LimitSpec): void {
    if (typeof name !== "string" || name === "") throw new ConfigError("a limit needs a non-empty name");
    const problem = illFormed(name, "limit name");
    if (problem !== undefined) throw new ConfigError(problem);
    const concurrent = spec?.concurrent ?? 0;
    const perSecond = spec?.perSecond ?? 0;
    if (!Number.isInteger(concurrent) || concurrent < 0) {
      throw new ConfigError(`limit '${name}': concurrent must be a whole number ≥ 0 (0 for unbounded); got ${concurrent}`);
    }
    if (!Number.isFinite(perSecond) || perSecond < 0) {
      throw new ConfigError(`limit '${name}': perSecond must be a finite number ≥ 0 (0 for unbounded); got ${perSecond}`);
    }
    let limit = this.limits.get(name);
    if (limit === undefined) {
      // A rate starts with no permit in hand: the first is one interval after the limit is declared,
      // so no restart (nor a crash loop) grants a permit sooner than the rate allows after the last
      // one the previous process granted. A changed spec keeps what the limit had accrued.
      limit = new Limit(name);
      limit.refilledAt = this.clock.now();
      this.limits.set(name, limit);
    }
    limit.concurrent = concurrent === 0 ? Infinity : concurrent;
    limit.perSecond = perSecond;
    this.pump(limit);
  }

  /**
   * A permit for one attempt of a step, or `undefined` when the step names no limit. Resolves with
   * the permit's release once the step's turn comes.
   */
  acquire(options: StepOptions): PermitRequest | undefined {
    const name = options.limit;
    if (name === undefined) return undefined;
    const limit = this.limits.get(name);
    if (limit === undefined) {
      const known = [...this.limits.keys()].map((n) => `'${n}'`).join(", ") || "none";
      return refused(
        new RejectedError(
          `the step names limit '${name}', which was never declared (declared: ${known}); declare it with engine.limit('${name}', { concurrent })`,
          { reason: "unknown-limit" },
        ),
      );
    }
    const priority = options.priority ?? 0;
    if (typeof priority !== "number" || !Number.isFinite(priority)) {
      return refused(new RejectedError(`the step's priority for limit '${name}' must be a finite number; got ${String(priority)}`));
    }
    // A limit that bounds nothing needs no shared permit either.
    const local = this.shared === undefined || (limit.concurrent === Infinity && limit.perSecond === 0);
    if (local && this.waitingIn(limit) === 0 && limit.inUse < limit.concurrent && this.takeToken(limit)) {
      return { granted: Promise.resolve(this.grant(limit)), withdraw: noop };
    }
    let waiter: Waiter | undefined;
    const granted = new Promise<Release>((resolve) => {
      if (this.closed) return;
      waiter = { resolve, withdrawn: false };
      limit.queue.push(waiter, priority, options.fairness ?? "");
      this.pump(limit);
    });
    return {
      granted,
      withdraw: () => {
        if (waiter === undefined || waiter.withdrawn) return;
        waiter.withdrawn = true;
        limit.withdrawn++;
      },
      onLost: (listener) => {
        if (waiter !== undefined) waiter.lost = listener;
      },
      lapsed: () => waiter?.grant?.lapsed(),
    };
  }

  /** Permits of the limit held right now. */
  inUse(name: string): number {
    return this.known(name).inUse;
  }

  /** The names of the limits declared. */
  names(): string[] {
    return [...this.limits.keys()];
  }

  /** Steps waiting for a permit of the limit. */
  waiting(name: string): number {
    return this.waitingIn(this.known(name));
  }

  /** Forgets every waiting step and stops the rate timers; waiting steps never run. */
  close(): void {
    this.closed = true;
    for (const limit of this.limits.values()) {
      limit.timer?.cancel();
      limit.timer = undefined;
      limit.queue.clear();
      limit.withdrawn = 0;
    }
  }

  private waitingIn(limit: Limit): number {
    return limit.queue.size - limit.withdrawn;
  }

  /** The next waiter to serve, passing over those that withdrew. */
  private nextWaiter(limit: Limit): Waiter | undefined {
    for (;;) {
      const waiter = limit.queue.shift();
      if (waiter === undefined || !waiter.withdrawn) return waiter;
      limit.withdrawn--;
    }
  }

  private known(name: string): Limit {
    const limit = this.limits.get(name);
    if (limit === undefined)
      throw new RejectedError(`no limit is named '${name}'; declare it with engine.limit('${name}', { concurrent })`, {
        reason: "unknown-limit",
      });
    return limit;
  }

  private grant(limit: Limit, shared?: Release): Release {
    limit.inUse++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      limit.inUse--;
      shared?.();
      if (shared !== undefined) {
        // A permit freed here goes to the next waiting step at once, not after the retry delay.
        limit.timer?.cancel();
        limit.timer = undefined;
      }
      this.pump(limit);
    };
  }

  /** Hands free permits to waiting steps in serving order. */
  private pump(limit: Limit): void {
    if (this.shared !== undefined) return this.pumpShared(limit, this.shared);
    while (!this.closed && this.waitingIn(limit) > 0 && limit.inUse < limit.concurrent) {
      if (!this.takeToken(limit)) {
        this.armRefill(limit);
        return;
      }
      (this.nextWaiter(limit) as Waiter).resolve(this.grant(limit));
    }
  }

  /** Takes a shared permit for the next waiting step, one request at a time per limit. */
  private pumpShared(limit: Limit, shared: SharedPermits): void {
    if (this.closed || limit.taking || limit.timer !== undefined || this.waitingIn(limit) === 0 || limit.inUse >= limit.concurrent) return;
    limit.taking = true;
    const retry = (ms: number): void => {
      if (this.closed) return;
      limit.timer = this.clock.schedule(ms, () => {
        limit.timer = undefined;
        this.pump(limit);
      });
    };
    let holder: Waiter | undefined;
    shared
      .take(limit.name, limit.concurrent, limit.perSecond, (reason) => holder?.lost?.(reason))
      .then(
        (got) => {
          limit.taking = false;
          if ("retryInMs" in got) return retry(got.retryInMs < 0 ? FULL_RETRY_MS : got.retryInMs);
          const waiter = this.nextWaiter(limit);
          if (this.closed || waiter === undefined) return got.release();
          holder = waiter;
          waiter.grant = got;
          waiter.resolve(this.grant(limit, got.release));
          this.pump(limit);
        },
        // The store could not be reached: the waiting steps keep waiting and it is asked again.
        () => {
          limit.taking = false;
          retry(FULL_RETRY_MS * 10);
        },
      );
  }

  private takeToken(limit: Limit): boolean {
    if (limit.perSecond === 0) return true;
    const now = this.clock.now();
    // One token at most: permits are spaced `1000 / perSecond` ms apart, with no burst.
    limit.tokens = Math.min(1, limit.tokens + ((now - limit.refilledAt) * limit.perSecond) / 1000);
    limit.refilledAt = now;
    if (limit.tokens < 1) return false;
    limit.tokens -= 1;
    return true;
  }

  private armRefill(limit: Limit): void {
    if (limit.timer !== undefined) return;
    const wait = Math.max(1, Math.ceil(((1 - limit.tokens) * 1000) / limit.perSecond));
    limit.timer = this.clock.schedule(wait, () => {
      limit.timer = undefined;
      this.pump(limit);
    });
  }
}

function noop(): void {}

/** A request that is refused outright: its promise rejects, and there is no place to give up. */
function refused(error: Error): PermitRequest {
  return { granted: Promise.reject(error), withdraw: noop };
}
