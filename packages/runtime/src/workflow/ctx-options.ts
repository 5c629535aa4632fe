import type { Duration } from "../core/duration.js";
import type { StepOptions } from "./step-options.js";

/** Options of `ctx.waitFor` and `ctx.condition`. */
export interface WaitOptions {
  /** Give up after this long: `waitFor` resolves `undefined`, `condition` resolves `false`. */
  timeout?: Duration;
}

/** Options of `ctx.startChild` and `ctx.executeChild`. */
export interface ChildOptions {
  /** What happens to the child when this run ends first: terminate it (default), ask it to cancel, or leave it. */
  close?: "terminate" | "request-cancel" | "abandon";
  /** Stop waiting for the child's result after this long (the child is then closed by `close`). */
  timeout?: Duration;
  /** @internal The timeout in ms. */
  timeoutMs?: number;
}

/** Options of `ctx.continueAsNew`. */
export interface ContinueAsNewOptions {
  /**
   * The search attributes the next run starts with, instead of this run's (which it carries over
   * by default); `{}` starts it with none.
   */
  attributes?: Record<string, unknown>;
}

/** A child run started by `ctx.startChild`. */
export interface ChildHandle<T> {
  readonly id: string;
  /** The child's result, journaled in the parent; rejects with its error or a `TimeoutError`. */
  result(): Promise<T>;
}

/** What `ctx.awaitCompletion` hands its `send` function. */
export interface Completion {
  /** Pass it to whoever completes the work; they call `engine.complete(token, value)`. */
  readonly token: string;
}

/** Options of `ctx.awaitCompletion`: those of the step that sends the token, and a bound on the wait. */
export interface AwaitCompletionOptions extends StepOptions {
  /**
   * Stop waiting for the answer after this long (a durable timer, counted once the token is sent):
   * the call then rejects with a `TimeoutError`, and a late answer to the token changes nothing.
   */
  waitTimeout?: Duration;
}
