import { ConfigError } from "../core/errors.js";
import { toMillis, type Duration } from "../core/duration.js";

/** An error class: retries stop at once for errors that are instances of one of these. */
export type ErrorClass = abstract new (...args: any[]) => Error;

/**
 * How a failed step is retried. Attempts are counted from 1; the delay before attempt `n + 1` is
 * `initial * 2^(n - 1)`, capped at `max`.
 *
 * @example
 * @Step({ retry: RetryPolicy.exponential(5, "100ms", "10s").nonRetryable(CardDeclinedError) })
 */
export class RetryPolicy {
  private constructor(
    /** Total attempts, the first included. */
    readonly maxAttempts: number,
    readonly initialMs: number,
    readonly maxMs: number,
    readonly nonRetryableErrors: readonly ErrorClass[] = [],
  ) {}

  /** Up to `maxAttempts` attempts with delays doubling from `initial` up to `max`. */
  static exponential(maxAttempts: number, initial: Duration = "100ms", max: Duration = "1m"): RetryPolicy {
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new ConfigError(`RetryPolicy.exponential: maxAttempts must be a whole number ≥ 1; got ${maxAttempts}`);
    }
    const initialMs = toMillis(initial, "RetryPolicy initial delay");
    const maxMs = toMillis(max, "RetryPolicy max delay");
    if (maxMs < initialMs) throw new ConfigError(`RetryPolicy.exponential: max delay ${maxMs}ms is below the initial ${initialMs}ms`);
    return new RetryPolicy(maxAttempts, initialMs, maxMs);
  }

  /** One attempt only. */
  static none(): RetryPolicy {
    return new RetryPolicy(1, 0, 0);
  }

  /** The same policy, but errors of these classes fail the step at once. */
  nonRetryable(...errors: ErrorClass[]): RetryPolicy {
    return new RetryPolicy(this.maxAttempts, this.initialMs, this.maxMs, [...this.nonRetryableErrors, ...errors]);
  }

  /** The delay before the attempt after `attempt`, or `undefined` when no attempt is left for `error`. */
  delayAfter(attempt: number, error: unknown): number | undefined {
    if (attempt >= this.maxAttempts) return undefined;
    if (this.nonRetryableErrors.some((cls) => error instanceof cls)) return undefined;
    return Math.min(this.maxMs, this.initialMs * 2 ** (attempt - 1));
  }
}

/** Steps without a policy: three attempts, 100 ms doubling to 10 s. */
export const DEFAULT_RETRY = RetryPolicy.exponential(3, "100ms", "10s");
