import type { FactoryProvider } from "@nestjs/common";
import { Engine } from "@fusee/runtime";
import { checkModuleOptions } from "./check-module-options.js";
import { FUSEE_MODULE_OPTIONS } from "./fusee.constants.js";
import { WorkflowContainer } from "./injector/workflow-container.js";
import type { FuseeModuleOptions } from "./interfaces/fusee-module-options.interface.js";

/**
 * The engine, opened while Nest builds the providers so that `Engine` is injectable by its class and
 * usable from any `onModuleInit`. It opens with no workflow registered, so no workflow code runs
 * and no run resumes until the module registers the workflows in `onApplicationBootstrap`.
 */
export const engineProvider: FactoryProvider<Promise<Engine>> = {
  provide: Engine,
  inject: [FUSEE_MODULE_OPTIONS, WorkflowContainer],
  useFactory: (options: FuseeModuleOptions, container: WorkflowContainer): Promise<Engine> => {
    checkModuleOptions(options);
    return Engine.open(options.config, {
      container,
      ...(options.limits !== undefined ? { limits: options.limits } : {}),
      ...(options.onEvent !== undefined ? { onEvent: options.onEvent } : {}),
    });
  },
};
