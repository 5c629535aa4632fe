import { ConfigError, NotFoundError } from "../core/errors.js";
import { definitionOf, type WorkflowClass, type WorkflowDefinition } from "../workflow/registry.js";

/** The workflow types an engine knows, by type name and by class. */
export class WorkflowCatalog {
  private readonly byName = new Map<string, WorkflowDefinition>();
  /** A start by class looks its type up here without reading metadata. */
  private readonly byClass = new Map<WorkflowClass, WorkflowDefinition>();

  register(cls: WorkflowClass): WorkflowDefinition {
    const def = definitionOf(cls);
    const known = this.byName.get(def.name);
    if (known !== undefined && known.cls !== cls) {
      throw new ConfigError(
        `two workflow classes are named '${def.name}' (${known.cls.name} and ${cls.name}); give one another name with @Workflow("...")`,
      );
    }
    this.byName.set(def.name, def);
    this.byClass.set(cls, def);
    return def;
  }

  /** The definition of a class (registered on first use) or of a registered type name. */
  resolve(type: WorkflowClass | string): WorkflowDefinition {
    if (typeof type === "function") return this.byClass.get(type) ?? this.byName.get(definitionOf(type).name) ?? this.register(type);
    const def = this.byName.get(type);
    if (def === undefined) {
      const names = [...this.byName.keys()].map((n) => `'${n}'`).join(", ") || "none";
      throw new NotFoundError(
        `no workflow type '${type}' is registered (registered: ${names}); pass its class to Engine.open or engine.register`,
      );
    }
    return def;
  }

  get(name: string): WorkflowDefinition | undefined {
    return this.byName.get(name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }
}
