import type { Ctx, WorkflowClass } from "@fusee/runtime";

/** Where one dependency of a workflow comes from: the run's context, or an instance Nest made. */
export type DependencySource = { readonly kind: "ctx" } | { readonly kind: "value"; readonly value: unknown };

/**
 * How to build a workflow class: its constructor arguments and injected properties, worked out once.
 * Workflows are built on every start and replay, synchronously, so everything but the run's context
 * is an instance Nest has already made.
 */
export interface WorkflowRecipe {
  readonly cls: WorkflowClass;
  readonly params: readonly DependencySource[];
  readonly properties: ReadonlyArray<{ readonly key: string | symbol; readonly source: DependencySource }>;
}

export const CTX_SOURCE: DependencySource = { kind: "ctx" };

/** A new instance of the recipe's class for the run whose context is `ctx`. */
export function build(recipe: WorkflowRecipe, ctx: Ctx): object {
  const value = (source: DependencySource): unknown => (source.kind === "ctx" ? ctx : source.value);
  const instance = new recipe.cls(...recipe.params.map(value)) as Record<string | symbol, unknown>;
  for (const { key, source } of recipe.properties) instance[key] = value(source);
  return instance;
}
