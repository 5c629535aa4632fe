import { Global, Module, Scope, type FactoryProvider } from "@nestjs/common";
import { ConfigError, Ctx } from "@fusee/runtime";

/**
 * `Ctx` as Nest sees it: a request-scoped provider, so that a module can list a workflow class among
 * its providers and have Nest check its other dependencies while the application starts. A scoped
 * dependency makes the workflow scoped too, so Nest never builds one itself; the engine builds each
 * instance with its run's own context.
 */
const ctxProvider: FactoryProvider<Ctx> = {
  provide: Ctx,
  scope: Scope.REQUEST,
  useFactory: (): Ctx => {
    throw new ConfigError(
      "Ctx exists only inside a workflow run, so only the engine can build a workflow class; " +
        "to call a workflow, inject its generated client (listed in FuseeModule's clients) or the Engine",
    );
  },
};

/** Makes `Ctx` resolvable in every module, so a workflow class can be a provider of any of them. */
@Global()
@Module({ providers: [ctxProvider], exports: [Ctx] })
export class WorkflowContextModule {}
