import type { Type } from "@nestjs/common";
import { ConfigError } from "@fusee/runtime";
import { dependencyName } from "./dependency-name.js";

/** A dependency as a message names it: `PaymentService (constructor parameter 1)`. */
export function describeDependency(token: unknown, where: string): string {
  return `${dependencyName(token)} (${where})`;
}

/** A dependency with a request or transient scope, which a workflow cannot take. */
export function scopedDependency(cls: Type, where: string, token: unknown, scope: "request" | "transient"): ConfigError {
  return new ConfigError(
    `workflow ${cls.name} cannot take ${describeDependency(token, where)}: it is ${scope}-scoped, and the engine builds ` +
      `workflows on every start and replay, outside any request, from instances that already exist; ` +
      `make it a singleton provider (the default scope), or pass the workflow what it needs as input or through a step`,
  );
}
