import type { ModuleRef } from "@nestjs/core";
import type { WorkflowClass } from "@fusee/runtime";
import { checkTypedConstructor } from "./check-typed-constructor.js";
import { injectionPoints } from "./injection-points.js";
import { sourceByToken } from "./source-by-token.js";
import type { WorkflowRecipe } from "./workflow-recipe.js";

/**
 * The recipe of a workflow class that no module lists among its providers (only
 * `FuseeModule.forRoot({ workflows })` names it): each dependency is looked up by its token among
 * the providers of the whole application, as `app.get(token)` would.
 */
export function recipeFromMetadata(cls: WorkflowClass, moduleRef: ModuleRef): WorkflowRecipe {
  const points = injectionPoints(cls);
  checkTypedConstructor(cls, points);
  return {
    cls,
    params: points.params.map((point, i) => sourceByToken(cls, moduleRef, point, `constructor parameter ${i}`)),
    properties: points.properties.map((point) => ({
      key: point.key,
      source: sourceByToken(cls, moduleRef, point, `property ${String(point.key)}`),
    })),
  };
}
