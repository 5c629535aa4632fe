import { Ctx, type WorkflowClass } from "@fusee/runtime";
import type { ProviderWrapper } from "../workflows/workflow-explorer.js";
import { scopedDependency } from "./dependency-errors.js";
import { injectionPoints } from "./injection-points.js";
import { CTX_SOURCE, type DependencySource, type WorkflowRecipe } from "./workflow-recipe.js";

/**
 * The recipe of a workflow class that a module lists among its providers. Nest resolved the
 * class's dependencies in that module while the application started (its own providers, its
 * imports' exports, global modules; `@Inject()` tokens, `@Optional()`), and failed the start for any
 * it could not find; the recipe takes the instances it made.
 */
export function recipeFromProvider(cls: WorkflowClass, wrapper: ProviderWrapper): WorkflowRecipe {
  // Nest keeps no list until a wrapper has a dependency of that kind.
  const resolved = wrapper.getCtorMetadata() ?? [];
  const points = injectionPoints(cls);
  const count = Math.max(points.params.length, resolved.length);
  const byKey = new Map((wrapper.getPropertiesMetadata() ?? []).map((p) => [p.key, p.wrapper]));
  return {
    cls,
    params: Array.from({ length: count }, (_, i) => sourceOf(cls, resolved[i], `constructor parameter ${i}`)),
    properties: points.properties.flatMap(({ key }) => {
      const dependency = byKey.get(key);
      return dependency === undefined ? [] : [{ key, source: sourceOf(cls, dependency, `property ${String(key)}`) }];
    }),
  };
}

function sourceOf(cls: WorkflowClass, dependency: ProviderWrapper | undefined, where: string): DependencySource {
  // An @Optional() dependency that no module provides.
  if (dependency === undefined) return { kind: "value", value: undefined };
  if (dependency.token === Ctx) return CTX_SOURCE;
  if (!dependency.isDependencyTreeStatic()) throw scopedDependency(cls, where, dependency.token, "request");
  if (dependency.isTransient) throw scopedDependency(cls, where, dependency.token, "transient");
  return { kind: "value", value: dependency.instance };
}
