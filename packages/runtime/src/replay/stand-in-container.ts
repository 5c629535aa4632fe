import "reflect-metadata";
import type { DependencyContainer, InjectionToken } from "tsyringe";
import { ConfigError } from "../core/errors.js";
import { Ctx } from "../workflow/ctx.js";
import { definitionOf, type WorkflowClass } from "../workflow/registry.js";

/** Where tsyringe's `@inject(token)` keeps its tokens, by parameter index. */
const INJECTION_TOKENS = "injectionTokens";

/**
 * The container a {@link Replayer} builds workflows with when it is given none. A replay runs no
 * step body, so a workflow's services are never called: each constructor parameter but its `Ctx`
 * gets a stand-in, and the services may live anywhere (a NestJS module, a container of the
 * application's own) or need what a test machine lacks. A stand-in that workflow code touches
 * outside a step throws a `ConfigError` naming the workflow, the parameter and the member.
 */
export class StandInContainer implements DependencyContainer {
  constructor(
    private ctx?: Ctx,
    /** The first refusal of a stand-in built here or in a child, shared by them. */
    private readonly refusals: { first?: ConfigError } = {},
  ) {}

  createChildContainer(): StandInContainer {
    return new StandInContainer(this.ctx, this.refusals);
  }

  /** The first time workflow code touched a stand-in, if it did. */
  refusal(): ConfigError | undefined {
    return this.refusals.first;
  }

  register(token: InjectionToken<unknown>, provider: unknown): DependencyContainer {
    const value = typeof provider === "object" && provider !== null && "useValue" in provider ? provider.useValue : undefined;
    if (token !== Ctx || !(value instanceof Ctx)) throw unsupported("register");
    this.ctx = value;
    return this;
  }

  resolve<T>(token: InjectionToken<T>): T {
    if (token === Ctx && this.ctx !== undefined) return this.ctx as T;
    if (typeof token !== "function" || this.ctx === undefined) throw unsupported("resolve");
    return build(token as unknown as WorkflowClass, this.ctx, this.refusals) as T;
  }

  isRegistered(token: InjectionToken<unknown>): boolean {
    return token === Ctx && this.ctx !== undefined;
  }

  reset(): void {
    this.ctx = undefined;
  }

  clearInstances(): void {}

  dispose(): void {}

  registerSingleton(): DependencyContainer {
    throw unsupported("registerSingleton");
  }

  registerType(): DependencyContainer {
    throw unsupported("registerType");
  }

  registerInstance(): DependencyContainer {
    throw unsupported("registerInstance");
  }

  resolveAll<T>(): T[] {
    throw unsupported("resolveAll");
  }

  beforeResolution(): void {
    throw unsupported("beforeResolution");
  }

  afterResolution(): void {
    throw unsupported("afterResolution");
  }
}

/** A workflow instance whose `Ctx` parameters are the run's and whose other parameters are stand-ins. */
function build(cls: WorkflowClass, ctx: Ctx, refusals: { first?: ConfigError }): object {
  const types = (Reflect.getMetadata("design:paramtypes", cls) as unknown[] | undefined) ?? [];
  const tokens = (Reflect.getOwnMetadata(INJECTION_TOKENS, cls) as Record<string, unknown> | undefined) ?? {};
  const count = Math.max(cls.length, types.length);
  const workflow = definitionOf(cls).name;
  const args = Array.from({ length: count }, (_, i) => {
    const token = tokens[String(i)] ?? types[i];
    // Without recorded types the context is told apart by position: fusee's workflows take it first.
    if (token === Ctx || (token === undefined && types.length === 0 && i === 0)) return ctx;
    return standIn(workflow, `${nameOf(token)} (constructor parameter ${i})`, refusals);
  });
  return new (cls as unknown as new (...args: unknown[]) => object)(...args);
}

function standIn(workflow: string, dependency: string, refusals: { first?: ConfigError }): object {
  const refuse = (member: string | symbol): never => {
    const error = new ConfigError(
      `workflow ${workflow} used ${dependency}${typeof member === "string" ? ` (.${member})` : ""} outside a step while replaying: ` +
        `a replay runs no step body, so it builds workflows with stand-ins for their services. ` +
        `Use the service inside a step, or give the Replayer a container that provides it (new Replayer({ container }))`,
    );
    // Workflow code may catch it; the replay still reports it.
    refusals.first ??= error;
    throw error;
  };
  return new Proxy(Object.create(null) as object, {
    // Promise resolution and inspection look for these; answering them leaves the stand-in untouched.
    get: (_target, key) => (key === "then" || typeof key === "symbol" ? undefined : refuse(key)),
    set: (_target, key) => refuse(key),
    apply: () => refuse("call"),
  });
}

function nameOf(token: unknown): string {
  if (typeof token === "function") return token.name || "an anonymous class";
  if (typeof token === "symbol" || typeof token === "string") return String(token);
  return "a service";
}

function unsupported(call: string): ConfigError {
  return new ConfigError(`a Replayer given no container builds workflows with stand-ins and supports no ${call}`);
}
