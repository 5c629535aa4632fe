import type { Duration } from "../core/duration.js";
import type { RetryPolicy } from "./retry-policy.js";

/** A class whose instances class-transformer can rebuild. */
export type ClassType<T = unknown> = new (...args: any[]) => T;

/** Options of a durable step, for `@Step(options)` and `ctx.step(name, fn, options)`. */
export interface StepOptions {
  /** The step's journal name; the method name by default. */
  name?: string;
  /** Retries of a failing attempt; `DEFAULT_RETRY` when absent. */
  retry?: RetryPolicy;
  /** Each attempt fails with `TimeoutError` after this long. */
  timeout?: Duration;
  /** An attempt fails with `TimeoutError` when it has not called `ctx.heartbeat()` for this long. */
  heartbeatTimeout?: Duration;
  /** A named limit (`engine.limit(name, ...)`) the step takes a permit of. */
  limit?: string;
  /** Among steps waiting for a limit's permit, higher goes first. */
  priority?: number;
  /** Among waiting steps of equal priority, permits go round-robin across these keys. */
  fairness?: string;
  /** The class of the step's result, rebuilt on replay. */
  type?: ClassType;
}
