import { AsyncLocalStorage } from "node:async_hooks";
import type { StepOptions } from "./step-options.js";

/** What a decorated step method needs from the run its workflow instance belongs to. */
export interface StepHost {
  step(name: string, fn: () => unknown, options: StepOptions): Promise<unknown>;
}

const hosts = new WeakMap<object, StepHost>();

/** Ties a workflow instance to the run executing it, so its `@Step` methods become durable. */
export function bindInstance(instance: object, host: StepHost): void {
  hosts.set(instance, host);
}

export function hostOf(instance: object): StepHost | undefined {
  return hosts.get(instance);
}

/** What a running step attempt exposes to `ctx.key()`, `ctx.attempt()`, `ctx.heartbeat()`. */
export interface StepScope {
  readonly key: string;
  readonly attempt: number;
  readonly progress: unknown;
  heartbeat(progress: unknown): void;
}

/**
 * The attempt currently running in this async context. Step calls made from inside a step are plain
 * calls: only the outermost call is journaled.
 */
export const stepScope = new AsyncLocalStorage<StepScope>();
