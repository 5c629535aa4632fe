import { Inject, Injectable, type OnApplicationShutdown } from "@nestjs/common";
import type { TestEngine } from "@fusee/runtime/testing";
import { drainTimeoutMs } from "../check-module-options.js";
import { FUSEE_MODULE_OPTIONS } from "../fusee.constants.js";
import type { FuseeModuleOptions } from "../interfaces/fusee-module-options.interface.js";

/**
 * The engine a test uses now. `restart()` and `crash()` hand a test a new engine that Nest never
 * injected anywhere, so the module follows each one here and shuts the newest down when it closes.
 * Each new engine keeps the workflows and the workflow container (Nest's providers) of the first.
 */
@Injectable()
export class NewestTestEngine implements OnApplicationShutdown {
  private current: TestEngine | undefined;

  constructor(@Inject(FUSEE_MODULE_OPTIONS) private readonly options: FuseeModuleOptions) {}

  /** Follows `engine` and every engine its restarts and crashes open, and returns it. */
  follow(engine: TestEngine): TestEngine {
    this.current = engine;
    const restart = engine.restart.bind(engine);
    const crash = engine.crash.bind(engine);
    return Object.assign(engine, {
      restart: async (): Promise<TestEngine> => this.follow(await restart()),
      crash: async (): Promise<TestEngine> => this.follow(await crash()),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    const engine = this.current;
    if (engine === undefined) return;
    const timeoutMs = drainTimeoutMs(this.options);
    if (timeoutMs > 0) await engine.idle({ signal: AbortSignal.timeout(timeoutMs) });
    await engine.shutdown();
  }
}
