import { Module, type FactoryProvider } from "@nestjs/common";
import { DiscoveryModule } from "@nestjs/core";
import { FuseeLifecycle } from "./fusee.lifecycle.js";
import { ConfigurableModuleClass } from "./fusee.module-definition.js";
import { WorkflowContainer } from "./injector/workflow-container.js";
import { WorkflowInstantiator } from "./injector/workflow-instantiator.js";
import { WorkflowContextModule } from "./workflows/workflow-context.module.js";
import { WorkflowExplorer } from "./workflows/workflow-explorer.js";

const containerProvider: FactoryProvider<WorkflowContainer> = {
  provide: WorkflowContainer,
  inject: [WorkflowInstantiator],
  useFactory: (instantiator: WorkflowInstantiator) => new WorkflowContainer(instantiator),
};

/**
 * The fusee engine in a Nest application: `Engine` and the generated clients are injectable by their
 * class, workflows take their services from Nest's providers, runs resume once every module is
 * initialised, and the engine shuts down with the application.
 *
 * @example
 * @Module({
 *   imports: [FuseeModule.forRoot({ config: Config.local("./data"), workflows: [Pay], clients: [PayClient] })],
 *   providers: [PaymentService],
 * })
 * export class AppModule {}
 *
 * @example
 * FuseeModule.forRootAsync({
 *   imports: [ConfigModule],
 *   inject: [ConfigService],
 *   useFactory: (env: ConfigService) => ({ config: Config.postgres(env.getOrThrow("DATABASE_URL")), workflows: [Pay] }),
 *   clients: [PayClient],
 * })
 */
@Module({
  imports: [DiscoveryModule, WorkflowContextModule],
  providers: [WorkflowExplorer, WorkflowInstantiator, containerProvider, FuseeLifecycle],
})
export class FuseeModule extends ConfigurableModuleClass {}
