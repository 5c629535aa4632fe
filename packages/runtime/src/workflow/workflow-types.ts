import "reflect-metadata";
import { injectable } from "tsyringe";
import { ConfigError } from "../core/errors.js";
import { registerType } from "./payload-types.js";
import type { WorkflowClass } from "./registry.js";

type Slot = Function | undefined;

/** Classes of a handler's arguments and result. */
export interface HandlerTypes {
  readonly args?: readonly Slot[];
  readonly result?: Slot;
}

/**
 * What `fusee gen` knows of a workflow's types, for builds that emit no decorator metadata (esbuild,
 * tsx): the constructor's parameter classes for injection, and the classes of inputs, results and
 * arguments so their instances come back from the journal as themselves.
 */
export interface WorkflowTypes {
  readonly constructorParams?: readonly Slot[];
  readonly input?: Slot;
  readonly output?: Slot;
  readonly steps?: Readonly<Record<string, HandlerTypes>>;
  readonly signals?: Readonly<Record<string, HandlerTypes>>;
  readonly updates?: Readonly<Record<string, HandlerTypes>>;
}

// Values of these constructors are journaled by the codec itself; they need no registration.
const BUILT_IN = new Set<Function>([String, Number, Boolean, Array, Object, Function, Date, Map, Set, BigInt, Uint8Array, Promise]);

/**
 * Registers the types `fusee gen` found for a workflow class; the generated worker file calls it.
 *
 * @example
 * registerWorkflowTypes(Pay, { constructorParams: [Ctx, Payments], steps: { charge: { result: Money } } });
 */
export function registerWorkflowTypes(cls: WorkflowClass, types: WorkflowTypes): void {
  if (typeof cls !== "function") throw new ConfigError(`registerWorkflowTypes needs a workflow class; got ${String(cls)}`);
  const params = types.constructorParams;
  if (params !== undefined && Reflect.getOwnMetadata("design:paramtypes", cls) === undefined) {
    // Without compiler-emitted metadata tsyringe cannot see the constructor; give it what gen read.
    Reflect.defineMetadata("design:paramtypes", params.map((p) => p ?? Object), cls);
    injectable()(cls as new (...args: unknown[]) => unknown);
  }
  const slots: Slot[] = [types.input, types.output];
  for (const group of [types.steps, types.signals, types.updates]) {
    for (const handler of Object.values(group ?? {})) slots.push(...(handler.args ?? []), handler.result);
  }
  for (const slot of slots) {
    if (typeof slot === "function" && !BUILT_IN.has(slot) && slot.prototype !== undefined) {
      registerType(slot as new (...args: never[]) => unknown);
    }
  }
}
