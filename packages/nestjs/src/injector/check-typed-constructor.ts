import type { Type } from "@nestjs/common";
import { ConfigError } from "@fusee/runtime";
import type { InjectionPoints } from "./injection-points.js";

/**
 * Refuses a class whose constructor takes parameters the compiler recorded no types for: without
 * them its dependencies would silently be `undefined`.
 */
export function checkTypedConstructor(cls: Type, points: InjectionPoints): void {
  if (points.typed || cls.length <= points.params.length) return;
  throw new ConfigError(
    `workflow ${cls.name} takes ${cls.length} constructor parameters, but its class has no parameter types; ` +
      `compile it with "emitDecoratorMetadata": true (tsc does; esbuild and tsx do not), import the worker type table ` +
      `fusee gen writes (src/fusee.workflows.generated.ts), or name each parameter with @Inject(token)`,
  );
}
