import { Config, ConfigError, toMillis } from "@fusee/runtime";
import { DEFAULT_DRAIN_TIMEOUT } from "./fusee.constants.js";
import type { FuseeModuleOptions } from "./interfaces/fusee-module-options.interface.js";
import { isWorkflowClass } from "./workflows/workflow-type.js";

const WHERE = "FuseeModule";

/** Checks the options of `forRoot`, or what the factory of `forRootAsync` returned. */
export function checkModuleOptions(options: FuseeModuleOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new ConfigError(`${WHERE} needs options such as { config: Config.local("./data"), workflows: [Pay] }; got ${String(options)}`);
  }
  if (!(options.config instanceof Config)) {
    throw new ConfigError(
      `${WHERE} needs config, a Config such as Config.local("./data") or Config.postgres(url); got ${describe(options.config)}`,
    );
  }
  const workflows: unknown = options.workflows ?? [];
  if (!Array.isArray(workflows))
    throw new ConfigError(`${WHERE} workflows must be an array of @Workflow() classes; got ${describe(workflows)}`);
  workflows.forEach((cls: unknown, i) => {
    if (!isWorkflowClass(cls)) {
      throw new ConfigError(
        `${WHERE} workflows[${i}] (${describe(cls)}) is not a workflow class: decorate it with @Workflow() and give it a run(input) method`,
      );
    }
  });
  if (options.onEvent !== undefined && typeof options.onEvent !== "function") {
    throw new ConfigError(`${WHERE} onEvent must be a function; got ${describe(options.onEvent)}`);
  }
  drainTimeoutMs(options);
}

/** How long shutdown waits for the engine to settle, in ms. */
export function drainTimeoutMs(options: FuseeModuleOptions): number {
  return toMillis(options.drainTimeout ?? DEFAULT_DRAIN_TIMEOUT, `${WHERE} drainTimeout`);
}

function describe(value: unknown): string {
  if (typeof value === "function") return value.name || "an anonymous function";
  if (typeof value === "object" && value !== null)
    return value.constructor?.name === "Object" ? "an object" : `a ${value.constructor?.name ?? "value"}`;
  return JSON.stringify(value) ?? String(value);
}
