import { Scope, type Type } from "@nestjs/common";
import type { ModuleRef } from "@nestjs/core";
import { ConfigError, Ctx, type WorkflowClass } from "@fusee/runtime";
import { describeDependency, scopedDependency } from "./dependency-errors.js";
import { injectionPoints, type InjectionPoint } from "./injection-points.js";
import { CTX_SOURCE, type DependencySource, type WorkflowRecipe } from "./workflow-recipe.js";

/**
 * The recipe of a workflow class that no module lists among its providers (only
 * `FuseeModule.forRoot({ workflows })` names it): each dependency is looked up by its token among
 * the providers of the whole application, as `app.get(token)` would.
 */
export function recipeFromMetadata(cls: WorkflowClass, moduleRef: ModuleRef): WorkflowRecipe {
  const points = injectionPoints(cls);
  if (!points.typed && cls.length > points.params.length) {
    throw new ConfigError(
      `workflow ${cls.name} takes ${cls.length} constructor parameters, but its class has no parameter types; ` +
        `compile it with "emitDecoratorMetadata": true (tsc does; esbuild and tsx do not), or name each with @Inject(token)`,
    );
  }
  const source = (point: InjectionPoint, where: string): DependencySource => sourceOf(cls, moduleRef, point, where);
  return {
    cls,
    params: points.params.map((point, i) => source(point, `constructor parameter ${i}`)),
    properties: points.properties.map((point) => ({ key: point.key, source: source(point, `property ${String(point.key)}`) })),
  };
}

function sourceOf(cls: WorkflowClass, moduleRef: ModuleRef, { token, optional }: InjectionPoint, where: string): DependencySource {
  if (token === Ctx) return CTX_SOURCE;
  if (token === undefined || token === Object) {
    throw new ConfigError(
      `workflow ${cls.name}'s ${where} has no injection token (its type is an interface, a union or a primitive, ` +
        `or an import cycle left it undefined); name its provider with @Inject(TOKEN)`,
    );
  }
  let scope: Scope;
  try {
    scope = moduleRef.introspect(token as Type).scope ?? Scope.DEFAULT;
  } catch {
    if (optional) return { kind: "value", value: undefined };
    throw new ConfigError(
      `workflow ${cls.name} needs ${describeDependency(token, where)}, which no module provides; ` +
        `add it to the providers of a module of the application, or list ${cls.name} among the providers of the module that has it`,
    );
  }
  if (scope === Scope.REQUEST) throw scopedDependency(cls, where, token, "request");
  if (scope === Scope.TRANSIENT) throw scopedDependency(cls, where, token, "transient");
  return { kind: "value", value: moduleRef.get(token as Type, { strict: false }) };
}
