/** A scheduled callback of a {@link Clock}. */
export interface ClockTimer {
  cancel(): void;
}

/**
 * Time as the engine sees it. The system clock in production; a virtual one in tests, where
 * `advance("1d")` fires every timer that falls due at once.
 */
export interface Clock {
  now(): number;
  /** Calls `fn` once `ms` milliseconds from now have passed. */
  schedule(ms: number, fn: () => void): ClockTimer;
  /** For a virtual clock: whether callbacks are due that have not run yet. */
  hasDue?(): boolean;
  /**
   * For a virtual clock: tells it of an engine that runs on it, so that moving time waits for the
   * engine to settle between timers. Returns the function that ends this.
   */
  attach?(user: ClockUser): () => void;
}

/** An engine as a virtual clock sees it. */
export interface ClockUser {
  /**
   * Resolves once the engine has nothing to do until time moves. Step attempts whose code runs are
   * waited for up to `runningStepGraceMs` of real time, then left running.
   */
  settle(runningStepGraceMs: number): Promise<void>;
}

// setTimeout's delay is a signed 32-bit number of ms; longer waits are chained.
const MAX_DELAY = 2 ** 31 - 1;

/** Wall-clock time and Node's timers; an engine cancels its timers on shutdown. */
export const systemClock: Clock = {
  now: () => Date.now(),
  schedule(ms, fn) {
    let handle: NodeJS.Timeout;
    const due = Date.now() + ms;
    const arm = (delay: number): void => {
      handle = setTimeout(
        () => {
          const left = due - Date.now();
          if (left > 0) arm(left);
          else fn();
        },
        Math.min(Math.max(0, delay), MAX_DELAY),
      );
    };
    arm(ms);
    return { cancel: () => clearTimeout(handle) };
  },
};
