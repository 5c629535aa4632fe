import { Scope, type Type } from "@nestjs/common";
import type { ModuleRef } from "@nestjs/core";
import { ConfigError, Ctx } from "@fusee/runtime";
import { describeDependency, scopedDependency } from "./dependency-errors.js";
import type { InjectionPoint } from "./injection-points.js";
import { CTX_SOURCE, type DependencySource } from "./workflow-recipe.js";

/**
 * Where a workflow's dependency comes from when it is looked up by its token among the providers of
 * the whole application, as `app.get(token)` would: the run's `Ctx`, or a singleton's instance.
 */
export function sourceByToken(cls: Type, moduleRef: ModuleRef, { token, optional }: InjectionPoint, where: string): DependencySource {
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
