import { ConfigError } from "../core/errors.js";
import { toMillis, type Duration } from "../core/duration.js";

/** An error class: retries stop at once for errors that are instances of one of these. */
export type ErrorClass = abstract new (...args: any[]) => Error;

/**
 * How a failed step is retried. Attempts are counted from 1; the delay before attempt `n + 1` is
 * `initial * 2^(n - 1)`, capped at `max`. Retries stop at the first of: the attempts run out, the
 * error is of a non-retryable class, or the next attempt would begin later than the `within` bound
 * after the first began. Failed attempts are journaled, so every bound holds across restarts.
 *
 * Steps without a policy get {@link DEFAULT_RETRY}: three attempts, 100 ms doubling to 10 s.
 *
 * @example
 * @Step({ retry: RetryPolicy.exponential(5, "100ms", "10s").nonRetryable(CardDeclinedError) })
 * @Step({ retry: RetryPolicy.unlimited("1s", "5 minutes").within("2 days") })
 */
export class RetryPolicy {
  private constructor(
    /** Total attempts, the first included; `Infinity` for no limit. */
    readonly maxAttempts: number,
    readonly initialMs: number,
    readonly maxMs: number,
    readonly nonRetryableErrors: readonly ErrorClass[] = [],
    /** No attempt begins later than this after the first began; `undefined` for no bound. */
    readonly totalMs: number | undefined = undefined,
  ) {}

  /** Up to `maxAttempts` attempts (`Infinity` for no limit) with delays doubling from `initial` up to `max`. */
  static exponential(maxAttempts: number, initial: Duration = "100ms", max: Duration = "1m"): RetryPolicy {
    if (maxAttempts !== Infinity && (!Number.isInteger(maxAttempts) || maxAttempts < 1)) {
      throw new ConfigError(`RetryPolicy.exponential: maxAttempts must be a whole number ≥ 1 or Infinity; got ${maxAttempts}`);
    }
    const initialMs = toMillis(initial, "RetryPolicy initial delay");
    const maxMs = toMillis(max, "RetryPolicy max delay");
    if (maxMs < initialMs) throw new ConfigError(`RetryPolicy.exponential: max delay ${maxMs}ms is below the initial ${initialMs}ms`);
    return new RetryPolicy(maxAttempts, initialMs, maxMs);
  }

  /**
   * Retries until the step succeeds, fails with a non-retryable error, or runs past a `within`
   * bound; for steps whose failures are known to pass (a service that comes back).
   */
  static unlimited(initial: Duration = "100ms", max: Duration = "1m"): RetryPolicy {
    return RetryPolicy.exponential(Infinity, initial, max);
  }

  /** One attempt only. */
  static none(): RetryPolicy {
    return new RetryPolicy(1, 0, 0);
  }

  /** The same policy, but errors of these classes fail the step at once. */
  nonRetryable(...errors: ErrorClass[]): RetryPolicy {
    return new RetryPolicy(this.maxAttempts, this.initialMs, this.maxMs, [...this.nonRetryableErrors, ...errors], this.totalMs);
  }

  /**
   * The same policy, bounded in time: no attempt begins later than `total` after the first began
   * (an attempt already running is not cut short by it; `timeout` bounds that).
   */
  within(total: Duration): RetryPolicy {
    const totalMs = toMillis(total, "RetryPolicy.within total");
    return new RetryPolicy(this.maxAttempts, this.initialMs, this.maxMs, this.nonRetryableErrors, totalMs);
  }

  /**
   * The delay before the attempt after `attempt`, or `undefined` when no attempt is left for `error`
   * `elapsedMs` after the first attempt began.
   */
  delayAfter(attempt: number, error: unknown, elapsedMs = 0): number | undefined {
    if (attempt >= this.maxAttempts) return undefined;
    if (this.nonRetryableErrors.some((cls) => error instanceof cls)) return undefined;
    const delay = Math.min(this.maxMs, this.initialMs * 2 ** (attempt - 1));
    if (this.totalMs !== undefined && elapsedMs + delay > this.totalMs) return undefined;
    return delay;
  }
}

/**
 * Steps without a policy: three attempts, 100 ms doubling to 10 s. Three, because a step's failure
 * is as often a bug or a refusal as a blip: a bounded default rides out a dropped connection or a
 * restarting service, yet turns a step that can never succeed into a failed run soon, where it is
 * seen, instead of a run that retries unnoticed for ever. Steps that should outlast an outage say
 * so with `RetryPolicy.unlimited(...)`, bounded by `.within(...)`.
 */
export const DEFAULT_RETRY = RetryPolicy.exponential(3, "100ms", "10s");
