import type { DynamicModule, FactoryProvider, Provider } from "@nestjs/common";
import { Config, Engine, type Duration } from "@fusee/runtime";
import { TestEngine, VirtualClock } from "@fusee/runtime/testing";
import { checkModuleOptions } from "../check-module-options.js";
import { engineProvider } from "../engine.provider.js";
import { FUSEE_MODULE_OPTIONS } from "../fusee.constants.js";
import { FuseeModule } from "../fusee.module.js";
import { WorkflowContainer } from "../injector/workflow-container.js";
import type { FuseeModuleExtras, FuseeModuleOptions } from "../interfaces/fusee-module-options.interface.js";
import { NewestTestEngine } from "./newest-test-engine.js";

/** Options of {@link FuseeTestingModule.forRoot}: those of `FuseeModule.forRoot` but `config`, and the test engine's. */
export interface FuseeTestingModuleOptions extends Omit<FuseeModuleOptions, "config">, FuseeModuleExtras {
  /** Where the virtual clock starts (ms since the epoch). */
  startTime?: number;
  /** Runs kept in memory before parking (small values exercise parking and replay). */
  cache?: number;
  /** How long `clock.advance` waits for running step attempts before it lets time pass around them. */
  runningStepGrace?: Duration;
}

/**
 * `FuseeModule` on a `TestEngine`: in memory, on a virtual clock, with the same injection and
 * lifecycle. `Engine` is the test engine, and `VirtualClock` is injectable to move its time.
 * `restart()` and `crash()` of the injected engine return an engine with the same workflows, built
 * from the same Nest providers; closing the module shuts the newest one down.
 *
 * @example
 * const moduleRef = await Test.createTestingModule({
 *   imports: [FuseeTestingModule.forRoot({ workflows: [Pay], clients: [PayClient] })],
 *   providers: [PaymentService],
 * }).compile();
 * await moduleRef.init();
 * const run = await moduleRef.get(PayClient).start("pay-1", 700);
 * await moduleRef.get(VirtualClock).advance("1h");
 * expect(await run.result()).to.equal("paid");
 * await moduleRef.close();
 */
export class FuseeTestingModule {
  static forRoot(options: FuseeTestingModuleOptions = {}): DynamicModule {
    const { startTime, cache, runningStepGrace, ...moduleOptions } = options;
    const base = FuseeModule.forRoot({ ...moduleOptions, config: Config.memory() });
    const testEngineProvider: FactoryProvider<Promise<TestEngine>> = {
      provide: Engine,
      inject: [FUSEE_MODULE_OPTIONS, WorkflowContainer, NewestTestEngine],
      useFactory: async (resolved: FuseeModuleOptions, container: WorkflowContainer, newest: NewestTestEngine): Promise<TestEngine> => {
        checkModuleOptions(resolved);
        const engine = await TestEngine.create({
          container,
          ...(resolved.limits !== undefined ? { limits: resolved.limits } : {}),
          ...(startTime !== undefined ? { startTime } : {}),
          ...(cache !== undefined ? { cache } : {}),
          ...(runningStepGrace !== undefined ? { runningStepGrace } : {}),
        });
        return newest.follow(engine);
      },
    };
    const clockProvider: FactoryProvider<VirtualClock> = {
      provide: VirtualClock,
      inject: [Engine],
      useFactory: (engine: TestEngine) => engine.clock,
    };
    const providers: Provider[] = (base.providers ?? []).filter((p) => p !== engineProvider);
    return {
      ...base,
      providers: [...providers, NewestTestEngine, testEngineProvider, clockProvider],
      exports: [...(base.exports ?? []), VirtualClock],
    };
  }
}
