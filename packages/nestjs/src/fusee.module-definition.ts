import { ConfigurableModuleBuilder, type DynamicModule } from "@nestjs/common";
import { Engine } from "@fusee/runtime";
import { clientProviders } from "./client.providers.js";
import { engineProvider } from "./engine.provider.js";
import { FUSEE_CLIENTS, FUSEE_MODULE_OPTIONS } from "./fusee.constants.js";
import type { FuseeModuleExtras, FuseeModuleOptions } from "./interfaces/fusee-module-options.interface.js";

/** `forRoot` and `forRootAsync`, from Nest's builder; `clients` and `isGlobal` shape the module itself. */
export const { ConfigurableModuleClass, ASYNC_OPTIONS_TYPE } = new ConfigurableModuleBuilder<FuseeModuleOptions>({
  moduleName: "Fusee",
  optionsInjectionToken: FUSEE_MODULE_OPTIONS,
})
  .setClassMethodName("forRoot")
  .setExtras<FuseeModuleExtras>({ clients: [], isGlobal: false }, withEngine)
  .build();

/** Adds the engine and the clients to a `forRoot` or `forRootAsync` definition, and exports them. */
function withEngine(definition: DynamicModule, extras: FuseeModuleExtras): DynamicModule {
  const clients = clientProviders(extras.clients ?? []);
  return {
    ...definition,
    global: extras.isGlobal === true,
    providers: [
      ...(definition.providers ?? []),
      engineProvider,
      { provide: FUSEE_CLIENTS, useValue: clients.map((c) => c.provide) },
      ...clients,
    ],
    exports: [...(definition.exports ?? []), Engine, ...clients.map((c) => c.provide)],
  };
}

/** What `FuseeModule.forRootAsync` takes: `imports`, `inject` and `useFactory` (or `useClass`, `useExisting`), with `clients` and `isGlobal`. */
export type FuseeModuleAsyncOptions = typeof ASYNC_OPTIONS_TYPE;
