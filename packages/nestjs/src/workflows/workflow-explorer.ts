import { Injectable } from "@nestjs/common";
import { DiscoveryService } from "@nestjs/core";
import { ConfigError, type WorkflowClass } from "@fusee/runtime";
import { isWorkflowClass } from "./workflow-type.js";

/** Nest's record of one provider, as `DiscoveryService` hands it out. */
export type ProviderWrapper = ReturnType<DiscoveryService["getProviders"]>[number];

/**
 * Finds the `@Workflow()` classes listed among the providers of the application's modules. Nest has
 * resolved each one's dependencies in its own module, which is where the engine's instances of it
 * take them from.
 */
@Injectable()
export class WorkflowExplorer {
  private found: ReadonlyMap<WorkflowClass, ProviderWrapper> | undefined;

  constructor(private readonly discovery: DiscoveryService) {}

  /** The workflow classes among the providers. */
  workflows(): WorkflowClass[] {
    return [...this.providers().keys()];
  }

  /** The provider of a workflow class, or `undefined` when no module lists it. */
  providerOf(cls: WorkflowClass): ProviderWrapper | undefined {
    return this.providers().get(cls);
  }

  private providers(): ReadonlyMap<WorkflowClass, ProviderWrapper> {
    if (this.found !== undefined) return this.found;
    const found = new Map<WorkflowClass, ProviderWrapper>();
    for (const wrapper of this.discovery.getProviders()) {
      const cls = wrapper.metatype;
      // A factory provider's metatype is its factory function, never a workflow class.
      if (!isWorkflowClass(cls) || wrapper.inject != null || wrapper.isAlias) continue;
      const other = found.get(cls);
      if (other !== undefined) {
        throw new ConfigError(
          `workflow class ${cls.name} is a provider of two modules (${moduleName(other)} and ${moduleName(wrapper)}); ` +
            `the engine builds it one way only, so list it in the providers of one module`,
        );
      }
      found.set(cls, wrapper);
    }
    this.found = found;
    return found;
  }
}

function moduleName(wrapper: ProviderWrapper): string {
  return wrapper.host?.metatype?.name ?? "an unnamed module";
}
