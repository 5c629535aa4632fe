import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from "@nestjs/common";
import { ConfigError, Engine, type WorkflowClass } from "@fusee/runtime";
import { drainTimeoutMs } from "./check-module-options.js";
import { FUSEE_CLIENTS, FUSEE_MODULE_OPTIONS } from "./fusee.constants.js";
import { WorkflowInstantiator } from "./injector/workflow-instantiator.js";
import type { ClientClass, FuseeModuleOptions } from "./interfaces/fusee-module-options.interface.js";
import { WorkflowExplorer } from "./workflows/workflow-explorer.js";
import { workflowTypeOf } from "./workflows/workflow-type.js";

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
      this.checkClients(workflows);
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

  /** Every client starts a workflow this engine runs; one that does not would fail on its first call. */
  private checkClients(workflows: readonly WorkflowClass[]): void {
    const types = new Set(workflows.map(workflowTypeOf));
    for (const client of this.clients) {
      if (!types.has(client.workflowType)) {
        const known = [...types].map((t) => `'${t}'`).join(", ") || "none";
        throw new ConfigError(
          `FuseeModule client ${client.name} starts workflow '${client.workflowType}', which this engine does not run (it runs ${known}); ` +
            `list the workflow class in FuseeModule's workflows, or among the providers of a module`,
        );
      }
    }
  }
}
