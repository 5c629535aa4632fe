import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from "@nestjs/common";
import { Engine } from "@fusee/runtime";
import { drainTimeoutMs } from "./check-module-options.js";
import { checkClientWorkflows } from "./client.providers.js";
import { FUSEE_CLIENTS, FUSEE_MODULE_OPTIONS } from "./fusee.constants.js";
import { WorkflowInstantiator } from "./injector/workflow-instantiator.js";
import type { ClientClass, FuseeModuleOptions } from "./interfaces/fusee-module-options.interface.js";
import { WorkflowExplorer } from "./workflows/workflow-explorer.js";

/**
 * Starts the engine's work once the application is ready and ends it once the application stops:
 * workflows are registered, and unfinished runs resume, in `onApplicationBootstrap`, after every
 * module's `onModuleInit`, so no step calls a service that is not ready; the engine drains and shuts
 * down in `onApplicationShutdown` (`app.close()`, or a signal with `app.enableShutdownHooks()`).
 */
@Injectable()
export class FuseeLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(FUSEE_MODULE_OPTIONS) private readonly options: FuseeModuleOptions,
    @Inject(FUSEE_CLIENTS) private readonly clients: readonly ClientClass[],
    private readonly engine: Engine,
    private readonly explorer: WorkflowExplorer,
    private readonly instantiator: WorkflowInstantiator,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const workflows = [...new Set([...(this.options.workflows ?? []), ...this.explorer.workflows()])];
    try {
      for (const cls of workflows) this.instantiator.prepare(cls);
      checkClientWorkflows(this.clients, workflows);
      this.engine.register(...workflows);
    } catch (e) {
      // The application does not start, so nothing else would release the data directory.
      await this.engine.shutdown();
      throw e;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const timeoutMs = drainTimeoutMs(this.options);
    if (timeoutMs > 0) await this.engine.idle({ signal: AbortSignal.timeout(timeoutMs) });
    await this.engine.shutdown();
  }
}
