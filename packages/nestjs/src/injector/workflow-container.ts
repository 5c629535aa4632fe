import { ConfigError, Ctx, type WorkflowClass } from "@fusee/runtime";
import type { DependencyContainer, InjectionToken } from "tsyringe";
import { dependencyName } from "./dependency-name.js";
import type { WorkflowInstantiator } from "./workflow-instantiator.js";

/**
 * The tsyringe container the engine builds workflows with, answered from Nest's providers. For
 * each run the engine takes a child container, registers the run's `Ctx` in it and resolves the
 * workflow class; nothing else is registered or resolved here, so every other dependency comes from
 * Nest and none from tsyringe.
 */
export class WorkflowContainer implements DependencyContainer {
  constructor(
    private readonly workflows: WorkflowInstantiator,
    private ctx?: Ctx,
  ) {}

  createChildContainer(): DependencyContainer {
    return new WorkflowContainer(this.workflows, this.ctx);
  }

  register(token: InjectionToken<unknown>, provider: unknown): DependencyContainer {
    const value = typeof provider === "object" && provider !== null && "useValue" in provider ? provider.useValue : undefined;
    if (token !== Ctx || !(value instanceof Ctx)) throw unsupported(`register(${dependencyName(token)})`);
    this.ctx = value;
    return this;
  }

  resolve<T>(token: InjectionToken<T>): T {
    if (token === Ctx && this.ctx !== undefined) return this.ctx as T;
    if (typeof token !== "function" || this.ctx === undefined) throw unsupported(`resolve(${dependencyName(token)})`);
    return this.workflows.instantiate(token as WorkflowClass, this.ctx) as T;
  }

  isRegistered(token: InjectionToken<unknown>): boolean {
    return token === Ctx && this.ctx !== undefined;
  }

  reset(): void {
    this.ctx = undefined;
  }

  clearInstances(): void {}

  dispose(): void {}

  registerSingleton(token: InjectionToken<unknown>): DependencyContainer {
    throw unsupported(`registerSingleton(${dependencyName(token)})`);
  }

  registerType(token: InjectionToken<unknown>): DependencyContainer {
    throw unsupported(`registerType(${dependencyName(token)})`);
  }

  registerInstance(token: InjectionToken<unknown>): DependencyContainer {
    throw unsupported(`registerInstance(${dependencyName(token)})`);
  }

  resolveAll<T>(token: InjectionToken<T>): T[] {
    throw unsupported(`resolveAll(${dependencyName(token)})`);
  }

  beforeResolution(token: InjectionToken<unknown>): void {
    throw unsupported(`beforeResolution(${dependencyName(token)})`);
  }

  afterResolution(token: InjectionToken<unknown>): void {
    throw unsupported(`afterResolution(${dependencyName(token)})`);
  }
}

function unsupported(call: string): ConfigError {
  return new ConfigError(
    `FuseeModule builds workflows from Nest's providers, so its tsyringe container does not support ${call}; ` +
      `provide what a workflow needs in a Nest module instead`,
  );
}
