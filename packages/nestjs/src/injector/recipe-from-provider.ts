import type { ModuleRef } from "@nestjs/core";
import { Ctx, type WorkflowClass } from "@fusee/runtime";
import type { ProviderWrapper } from "../workflows/workflow-explorer.js";
import { checkTypedConstructor } from "./check-typed-constructor.js";
import { scopedDependency } from "./dependency-errors.js";
import { injectionPoints } from "./injection-points.js";
import { sourceByToken } from "./source-by-token.js";
import { CTX_SOURCE, type DependencySource, type WorkflowRecipe } from "./workflow-recipe.js";

/**
 * The recipe of a workflow class that a module lists among its providers. Nest resolved the
 * class's constructor parameters in that module while the application started (its own providers,
 * its imports' exports, global modules; `@Inject()` tokens, `@Optional()`), and failed the start
 * for any it could not find; the recipe takes the instances it made. Nest resolves the `@Inject()`
 * properties of a scoped class only when it builds one, which it never does for a workflow, so
 * those are looked up by token among the application's providers.
 */
export function recipeFromProvider(cls: WorkflowClass, wrapper: ProviderWrapper, moduleRef: ModuleRef): WorkflowRecipe {
  const points = injectionPoints(cls);
  checkTypedConstructor(cls, points);
  // Nest keeps no list until a wrapper has a constructor dependency.
  const resolved = wrapper.getCtorMetadata() ?? [];
  const count = Math.max(points.params.length, resolved.length);
  return {
    cls,
    params: Array.from({ length: count }, (_, i) => sourceOf(cls, resolved[i], `constructor parameter ${i}`)),
    properties: points.properties.map((point) => ({
      key: point.key,
      source: sourceByToken(cls, moduleRef, point, `property ${String(point.key)}`),
    })),
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
