import { fingerprintArgs } from "./args-fingerprint.js";
import "reflect-metadata";
import { injectable } from "tsyringe";
import { ConfigError, RejectedError } from "../core/errors.js";
import { toMillis } from "../core/duration.js";
import { illFormed } from "../core/ids.js";
import { QUERIES_METADATA, SIGNALS_METADATA, STEPS_METADATA, UPDATES_METADATA, WORKFLOW_METADATA } from "./metadata-keys.js";
import { RetryPolicy } from "./retry-policy.js";
import { registerType } from "./payload-types.js";
import { hostOf, scopeOf } from "./run-binding.js";
import type { ClassType, StepOptions } from "./step-options.js";

/** A workflow class: its `run(input)` method is the workflow body. */
export type WorkflowClass<I = any, O = any> = new (...args: any[]) => { run(input: I): Promise<O> | O };

/** Options of `@Workflow`. */
export interface WorkflowOptions {
  /** The workflow's type name; the class name by default. */
  name?: string;
  /** Patch IDs this workflow declares; `ctx.patched()` refuses any other. */
  patches?: readonly string[];
}

/** Options of `@Update`. */
export interface UpdateHandlerOptions<A = any> {
  name?: string;
  /** Runs first with `this` = the workflow; a throw rejects the update and records nothing. */
  validate?: (this: any, arg: A) => void;
}

/** Options of `@Signal` and `@Query`. */
export interface HandlerOptions {
  name?: string;
}

export interface StepDefinition {
  readonly name: string;
  readonly method: string;
  readonly options: StepOptions;
}

export interface UpdateDefinition {
  readonly method: string;
  readonly validate?: (this: any, arg: any) => void;
}

/** Everything fusee knows of a workflow class, gathered from its decorators or `register*` calls. */
export interface WorkflowDefinition {
  readonly name: string;
  readonly cls: WorkflowClass;
  readonly patches?: readonly string[];
  readonly steps: ReadonlyMap<string, StepDefinition>;
  readonly signals: ReadonlyMap<string, string>;
  readonly queries: ReadonlyMap<string, string>;
  readonly updates: ReadonlyMap<string, UpdateDefinition>;
}

const NAME = /^[^\s@][^@]{0,199}$/;

function checkName(name: unknown, what: string): string {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new ConfigError(`${what} name ${JSON.stringify(name)} is invalid: use 1 to 200 characters, no '@', not starting with a space`);
  }
  const problem = illFormed(name, `${what} name`);
  if (problem !== undefined) throw new ConfigError(problem);
  return name;
}

function ownMap<V>(key: string, target: object): Map<string, V> {
  let map = Reflect.getOwnMetadata(key, target) as Map<string, V> | undefined;
  if (!map) {
    // Subclasses inherit their base's handlers but may add to them without touching the base.
    const inherited = Reflect.getMetadata(key, target) as Map<string, V> | undefined;
    map = new Map(inherited);
    Reflect.defineMetadata(key, map, target);
  }
  return map;
}

function checkMethod(cls: Function, method: string, what: string): void {
  if (typeof (cls.prototype as Record<string, unknown>)[method] !== "function") {
    throw new ConfigError(`${what}: ${cls.name}.${method} is not a method`);
  }
}

function checkStepOptions(options: StepOptions, where: string): void {
  if (options.retry !== undefined && !(options.retry instanceof RetryPolicy)) {
    throw new ConfigError(`${where}: retry must be a RetryPolicy (RetryPolicy.exponential(...) or RetryPolicy.none())`);
  }
  if (options.timeout !== undefined) toMillis(options.timeout, `${where}: timeout`);
  if (options.heartbeatTimeout !== undefined) toMillis(options.heartbeatTimeout, `${where}: heartbeatTimeout`);
  if (options.priority !== undefined && !Number.isFinite(options.priority)) {
    throw new ConfigError(`${where}: priority must be a finite number; got ${options.priority}`);
  }
  if (options.limit !== undefined) checkName(options.limit, `${where}: limit`);
  if (options.type !== undefined && typeof options.type !== "function") {
    throw new ConfigError(`${where}: type must be a class`);
  }
}

export { checkStepOptions };

/**
 * Makes `cls.prototype[method]` a durable step: called from workflow code, it runs once and its result
 * is journaled; on replay the journaled result is returned without running it. The plain-function twin
 * of `@Step`.
 */
export function registerStep(cls: Function, method: string, options: StepOptions = {}): void {
  checkMethod(cls, method, "@Step");
  const name = checkName(options.name ?? method, `@Step on ${cls.name}.${method}:`);
  checkStepOptions(options, `@Step on ${cls.name}.${method}`);
  const steps = ownMap<StepDefinition>(STEPS_METADATA, cls);
  for (const s of steps.values()) {
    if (s.name === name && s.method !== method) {
      throw new ConfigError(`@Step: ${cls.name}.${method} and ${cls.name}.${s.method} share the step name '${name}'`);
    }
  }
  steps.set(method, { name, method, options });
  if (options.type !== undefined) registerType(options.type);
  const original = (cls.prototype as Record<string, (...args: unknown[]) => unknown>)[method] as (...args: unknown[]) => unknown;
  const durable = function (this: object, ...args: unknown[]): unknown {
    const host = hostOf(this);
    if (host === undefined || scopeOf(host) !== undefined) return original.apply(this, args);
    return host.step(name, () => original.apply(this, args), options, fingerprintArgs(args));
  };
  Object.defineProperty(durable, "name", { value: method });
  Object.defineProperty(cls.prototype, method, { value: durable, writable: true, configurable: true, enumerable: false });
}

/** Makes `method` the handler of signal `options.name ?? method`. The twin of `@Signal`. */
export function registerSignal(cls: Function, method: string, options: HandlerOptions = {}): void {
  checkMethod(cls, method, "@Signal");
  const name = checkName(options.name ?? method, `@Signal on ${cls.name}.${method}:`);
  ownMap<string>(SIGNALS_METADATA, cls).set(name, method);
}

/** Makes `method` the synchronous, read-only query `options.name ?? method`. The twin of `@Query`. */
export function registerQuery(cls: Function, method: string, options: HandlerOptions = {}): void {
  checkMethod(cls, method, "@Query");
  const name = checkName(options.name ?? method, `@Query on ${cls.name}.${method}:`);
  ownMap<string>(QUERIES_METADATA, cls).set(name, method);
}

/** Makes `method` the handler of update `options.name ?? method`. The twin of `@Update`. */
export function registerUpdate(cls: Function, method: string, options: UpdateHandlerOptions = {}): void {
  checkMethod(cls, method, "@Update");
  const name = checkName(options.name ?? method, `@Update on ${cls.name}.${method}:`);
  if (options.validate !== undefined && typeof options.validate !== "function") {
    throw new ConfigError(`@Update on ${cls.name}.${method}: validate must be a function`);
  }
  ownMap<UpdateDefinition>(UPDATES_METADATA, cls).set(name, {
    method,
    ...(options.validate ? { validate: options.validate } : {}),
  });
}

/**
 * Declares `cls` a workflow (its `run(input)` is the body) and makes it injectable through tsyringe.
 * The twin of `@Workflow`.
 */
export function registerWorkflow(cls: WorkflowClass, options: WorkflowOptions = {}): void {
  if (typeof cls !== "function" || typeof cls.prototype?.run !== "function") {
    throw new ConfigError(`@Workflow: ${(cls as Function | undefined)?.name ?? String(cls)} has no run(input) method`);
  }
  const name = checkName(options.name ?? cls.name, `@Workflow on ${cls.name}:`);
  const patches = options.patches;
  if (patches !== undefined) {
    if (!Array.isArray(patches)) throw new ConfigError(`@Workflow on ${cls.name}: patches must be an array of patch IDs`);
    for (const p of patches) checkName(p, `@Workflow on ${cls.name}: patch`);
  }
  Reflect.defineMetadata(WORKFLOW_METADATA, { name, ...(patches ? { patches: [...patches] } : {}) }, cls);
  injectable()(cls as ClassType);
}

/** The definition of a workflow class, or a `ConfigError` telling how to declare it. */
export function definitionOf(cls: WorkflowClass): WorkflowDefinition {
  const meta = Reflect.getOwnMetadata(WORKFLOW_METADATA, cls) as { name: string; patches?: string[] } | undefined;
  if (meta === undefined) {
    throw new ConfigError(`${cls?.name ?? String(cls)} is not a workflow: decorate it with @Workflow() or call registerWorkflow(${cls?.name}, {})`);
  }
  return {
    name: meta.name,
    cls,
    ...(meta.patches ? { patches: meta.patches } : {}),
    steps: (Reflect.getMetadata(STEPS_METADATA, cls) as Map<string, StepDefinition> | undefined) ?? new Map(),
    signals: (Reflect.getMetadata(SIGNALS_METADATA, cls) as Map<string, string> | undefined) ?? new Map(),
    queries: (Reflect.getMetadata(QUERIES_METADATA, cls) as Map<string, string> | undefined) ?? new Map(),
    updates: (Reflect.getMetadata(UPDATES_METADATA, cls) as Map<string, UpdateDefinition> | undefined) ?? new Map(),
  };
}

/** A rejected request naming the handler kind, the name and the workflow. */
export function unknownHandler(kind: "query" | "update" | "signal", name: string, def: WorkflowDefinition, id: string): RejectedError {
  const names = [...(kind === "query" ? def.queries : kind === "update" ? def.updates : def.signals).keys()];
  const known = names.length ? `; it has ${names.map((n) => `'${n}'`).join(", ")}` : `; it has none`;
  return new RejectedError(`workflow ${def.name} (ID ${id}) has no ${kind} '${name}'${known}`, { reason: `unknown-${kind}` });
}
