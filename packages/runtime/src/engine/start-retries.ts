import type { Clock, ClockTimer } from "../core/clock.js";
import { retryDelay } from "./flow-runs.js";

/**
 * When a schedule tries a failed start (or a failed wait) again: a start later after each failure
 * in a row, sooner again once one succeeds. The timers it set are cancelled together when the
 * schedule stops.
 */
export class StartRetries {
  private failures = 0;
  private readonly timers = new Set<ClockTimer>();

  constructor(private readonly clock: Clock) {}

  /** Calls `retry` after the delay the failures in a row call for (this one counted). */
  after(retry: () => void): void {
    this.failures++;
    this.wait(retryDelay(this.failures), retry);
  }

  /** Calls `then` after `ms`, unless the timers are cancelled first; failures in a row are not counted. */
  wait(ms: number, then: () => void): void {
    const timer = this.clock.schedule(ms, () => {
      this.timers.delete(timer);
      then();
    });
    this.timers.add(timer);
  }

  /** A start succeeded: the next failure waits the shortest delay again. */
  succeeded(): void {
    this.failures = 0;
  }

  cancelAll(): void {
    for (const t of this.timers) t.cancel();
    this.timers.clear();
  }
}
