/* eslint-disable @typescript-eslint/no-unsafe-function-type --
   Classes arrive from decorators and generated tables as plain constructors, which TypeScript types as Function. */
import "reflect-metadata";
import { injectable } from "tsyringe";
import { ConfigError } from "../core/errors.js";
import { MAILBOXES_METADATA } from "./metadata-keys.js";
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
  /** The names the workflow awaits with `ctx.waitFor`, when every such call names a literal. */
  readonly mailboxes?: readonly string[];
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
  if (types.constructorParams !== undefined) registerConstructorTypes(cls, types.constructorParams);
  if (types.mailboxes !== undefined) Reflect.defineMetadata(MAILBOXES_METADATA, [...types.mailboxes], cls);
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

/**
 * Gives a class the constructor parameter types `emitDecoratorMetadata` would have recorded, and makes
 * it injectable, unless the build recorded them already. The worker type table `fusee gen` writes
 * calls it for the services a workflow's constructor needs, directly or through other services, so
 * that they resolve under esbuild, tsx, swc or vitest too. `@inject(token)` on a parameter still wins.
 *
 * @example
 * registerConstructorTypes(PaymentService, [Ledger, HttpClient]);
 */
export function registerConstructorTypes(cls: abstract new (...args: never[]) => unknown, params: readonly Slot[]): void {
  if (typeof cls !== "function") throw new ConfigError(`registerConstructorTypes needs a class; got ${String(cls)}`);
  if (Reflect.getOwnMetadata("design:paramtypes", cls) !== undefined) return;
  // Without compiler-emitted metadata tsyringe cannot see the constructor; give it what gen read.
  Reflect.defineMetadata(
    "design:paramtypes",
    params.map((p) => p ?? Object),
    cls,
  );
  injectable()(cls as new (...args: unknown[]) => unknown);
}
