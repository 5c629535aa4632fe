import { AsyncLocalStorage } from "node:async_hooks";
import type { StepOptions } from "./step-options.js";

/** What a decorated step method needs from the run its workflow instance belongs to. */
export interface StepHost {
  /** `args`: a fingerprint of the call's arguments, journaled with its result (see `fingerprintArgs`). */
  step(name: string, fn: () => unknown, options: StepOptions, args?: string): Promise<unknown>;
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
  /** The run the attempt belongs to (its executor); a scope answers for that run alone. */
  readonly owner: object;
  readonly key: string;
  readonly attempt: number;
  readonly progress: unknown;
  /** Aborted when the attempt must stop: cancel, terminate, its timeout, engine shutdown. */
  readonly abortSignal: AbortSignal;
  /** Throws the abort's reason once the attempt is aborted. */
  heartbeat(progress: unknown): void;
}

/**
 * The attempt currently running in this async context. Step calls made from inside a step are plain
 * calls: only the outermost call is journaled.
 *
 * The context flows wherever the step's code goes, also into another workflow it starts, signals or
 * updates through the engine, so a scope counts only for its own run ({@link scopeOf}), and runs
 * apply their records outside any scope ({@link outsideSteps}).
 */
export const stepScope = new AsyncLocalStorage<StepScope>();

/** The attempt of `owner`'s run running in this async context, if any. */
export function scopeOf(owner: object): StepScope | undefined {
  const scope = stepScope.getStore();
  return scope !== undefined && scope.owner === owner ? scope : undefined;
}

/**
 * Calls `fn` (on `self`) outside any step's scope: workflow code (handlers, the body's continuations)
 * must never inherit the scope of a step whose code happened to trigger the record being applied.
 * The common case, no scope at all, makes no closure.
 */
export function outsideSteps<T>(self: T, fn: (this: T) => void): void {
  if (stepScope.getStore() === undefined) fn.call(self);
  else stepScope.exit(() => fn.call(self));
}
