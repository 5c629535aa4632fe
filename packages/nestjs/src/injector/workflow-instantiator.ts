import { Injectable } from "@nestjs/common";
import { ModuleRef } from "@nestjs/core";
import type { Ctx, WorkflowClass } from "@fusee/runtime";
import { WorkflowExplorer } from "../workflows/workflow-explorer.js";
import { recipeFromMetadata } from "./recipe-from-metadata.js";
import { recipeFromProvider } from "./recipe-from-provider.js";
import { build, type WorkflowRecipe } from "./workflow-recipe.js";

/**
 * Builds workflow instances from Nest's providers: a class some module lists among its providers
 * takes what Nest resolved for it there; any other class takes the application's providers by token.
 */
@Injectable()
export class WorkflowInstantiator {
  private readonly recipes = new Map<WorkflowClass, WorkflowRecipe>();

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly explorer: WorkflowExplorer,
  ) {}

  /** Works out now where each dependency of `cls` comes from; throws a `ConfigError` naming any it cannot have. */
  prepare(cls: WorkflowClass): void {
    this.recipeOf(cls);
  }

  /** A new instance of `cls` for the run whose context is `ctx`. */
  instantiate(cls: WorkflowClass, ctx: Ctx): object {
    return build(this.recipeOf(cls), ctx);
  }

  private recipeOf(cls: WorkflowClass): WorkflowRecipe {
    let recipe = this.recipes.get(cls);
    if (recipe === undefined) {
      const provider = this.explorer.providerOf(cls);
      recipe = provider === undefined ? recipeFromMetadata(cls, this.moduleRef) : recipeFromProvider(cls, provider, this.moduleRef);
      this.recipes.set(cls, recipe);
    }
    return recipe;
  }
}
