import type { DependencyContainer } from "tsyringe";
import { Config } from "../engine/config.js";
import { Engine } from "../engine/engine.js";
import type { WorkflowClass } from "../workflow/registry.js";
import { VirtualClock } from "./virtual-clock.js";

/** An in-memory engine on a virtual clock, for tests. */
export type TestEngine = Engine & { readonly clock: VirtualClock };

/** Options of {@link TestEngine.create}. */
export interface TestEngineOptions {
  workflows?: readonly WorkflowClass[];
  container?: DependencyContainer;
  /** Where the virtual clock starts (ms since the epoch). */
  startTime?: number;
  /** Runs kept in memory before parking (small values exercise parking and replay). */
  cache?: number;
}

/**
 * Creates test engines.
 *
 * @example
 * const engine = await TestEngine.create({ workflows: [Pay] });
 * const run = await engine.start(Pay, "p-1", 700);
 * await engine.clock.advance("1h");
 * expect(await run.result()).to.equal("...");
 * await engine.shutdown();
 */
export const TestEngine = {
  async create(options: TestEngineOptions = {}): Promise<TestEngine> {
    const clock = new VirtualClock(options.startTime);
    let config = Config.memory().clock(clock);
    if (options.cache !== undefined) config = config.cache(options.cache);
    const engine = await Engine.open(config, {
      ...(options.workflows ? { workflows: options.workflows } : {}),
      ...(options.container ? { container: options.container } : {}),
    });
    return Object.assign(engine, { clock }) as TestEngine;
  },
};
