import { toMillis, type Duration } from "../core/duration.js";
import { RejectedError } from "../core/errors.js";

/** Options of `engine.debounce` and `engine.batch`. */
export interface EventOptions {
  /** Deduplicates retried calls: an event ID already taken answers with its window's run and changes nothing. */
  eventId?: string;
}

/**
 * When debounced starts of one key become a run: `delay` after the latest start, but no later
 * than `maxWait` after the first start of the window.
 *
 * @example
 * await engine.debounce(Reindex, "doc-1", { rev: 7 }, Debounce.of("150ms").maxWait("1s"), { eventId: "e-7" });
 */
export class Debounce {
  private constructor(
    /** Quiet time after the latest start before the window closes. */
    readonly delay: Duration,
    /** Longest a window stays open, counted from its first start; unbounded when absent. */
    readonly maxWaitFor: Duration | undefined,
  ) {}

  /** A window that closes `delay` after its latest start. */
  static of(delay: Duration): Debounce {
    return new Debounce(delay, undefined);
  }

  /** The same rule, closing windows at most `d` after their first start. */
  maxWait(d: Duration): Debounce {
    return new Debounce(this.delay, d);
  }

  /** @internal The rule in milliseconds; `RejectedError` when it cannot work. */
  resolve(): { delayMs: number; maxWaitMs: number | undefined } {
    const delayMs = ruleMillis(this.delay, "Debounce delay");
    const maxWaitMs = this.maxWaitFor === undefined ? undefined : ruleMillis(this.maxWaitFor, "Debounce maxWait");
    if (maxWaitMs !== undefined && maxWaitMs < delayMs) {
      throw new RejectedError(
        `Debounce maxWait (${maxWaitMs}ms) is shorter than its delay (${delayMs}ms); a window could never wait its delay`,
      );
    }
    return { delayMs, maxWaitMs };
  }
}

/**
 * When batched events of one key become a run: once `size` events arrived, or `timeout` after the
 * batch's first event, whichever comes first. The run's input is the events in arrival order.
 *
 * @example
 * await engine.batch(Bulk, "tenant-1", { sku: "a" }, Batch.of(100, "2s"), { eventId: "evt-1" });
 */
export class Batch {
  private constructor(
    /** Events that fill a batch. */
    readonly size: number,
    /** Longest a batch waits for more events, from its first event. */
    readonly timeout: Duration,
  ) {}

  static of(size: number, timeout: Duration): Batch {
    return new Batch(size, timeout);
  }

  /** @internal The rule with its timeout in milliseconds; `RejectedError` when it cannot work. */
  resolve(): { size: number; timeoutMs: number } {
    if (!Number.isInteger(this.size) || this.size < 1 || this.size > 100_000) {
      throw new RejectedError(`Batch size must be a whole number from 1 to 100000; got ${this.size}`);
    }
    const timeoutMs = ruleMillis(this.timeout, "Batch timeout");
    if (timeoutMs <= 0) throw new RejectedError(`Batch timeout must be longer than 0ms; got ${JSON.stringify(this.timeout)}`);
    return { size: this.size, timeoutMs };
  }
}

function ruleMillis(d: Duration, what: string): number {
  try {
    return toMillis(d, what);
  } catch (e) {
    throw new RejectedError((e as Error).message, { cause: e });
  }
}
