import type { DependencyContainer } from "tsyringe";
import type { Duration } from "../core/duration.js";
import type { Logger } from "../core/logger.js";
import { Config } from "../engine/config.js";
import { Engine } from "../engine/engine.js";
import type { LimitSpec } from "../engine/limits.js";
import { MemoryLog } from "../storage/memory-log.js";
import type { WorkflowClass } from "../workflow/registry.js";
import { VirtualClock } from "./virtual-clock.js";

/** An in-memory engine on a virtual clock, for tests; it can restart, or crash, on the same data. */
export type TestEngine = Engine & {
  readonly clock: VirtualClock;
  /**
   * Shuts this engine down and opens a new one on the same data, clock and options, with the
   * workflows of this one (those of `create` and of `register`), as a process restart would:
   * unfinished runs resume. Use the returned engine from then on.
   */
  restart(): Promise<TestEngine>;
  /**
   * Stops this engine as a crash would (nothing more is written, running steps are aborted) and
   * opens a new one on what survived, with the workflows of this one. Use the returned engine from
   * then on.
   *
   * Each shard's batch that was not yet durable is lost or kept on its own, as a power cut finds
   * one shard's sync done and another's not: appends to different shards that were both pending
   * may survive one without the other. Which is seeded: `seed` chooses, else the next number of the
   * sequence `TestEngineOptions.seed` starts, so a test crashes the same way on every run.
   *
   * @example
   * engine = await engine.crash(); // or engine.crash(7) to try another pattern
   */
  crash(seed?: number): Promise<TestEngine>;
};

/** Options of {@link TestEngine.create}. */
export interface TestEngineOptions {
  workflows?: readonly WorkflowClass[];
  container?: DependencyContainer;
  /** Where the virtual clock starts (ms since the epoch). */
  startTime?: number;
  /** Runs kept in memory before parking (small values exercise parking and replay). */
  cache?: number;
  /** Limits declared before any run resumes. */
  limits?: Readonly<Record<string, LimitSpec>>;
  /** How long `clock.advance` waits for running step attempts before moving on (see `VirtualClockOptions`). */
  runningStepGrace?: Duration;
  /** The engine's logger (`Config.logger`): engine events and `ctx.log` lines go to it. */
  logger?: Logger;
  /** Seeds which shards' pending batches each `crash()` keeps (0 by default). */
  seed?: number;
  /** Shards of the engine's log (4 by default, as a local data directory's). */
  shards?: number;
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
    const clock = new VirtualClock(
      options.startTime,
      options.runningStepGrace !== undefined ? { runningStepGrace: options.runningStepGrace } : {},
    );
    // Several shards, as a real data directory has: a crash then finds some shards' batches durable and others not.
    let config = Config.memory()
      .shards(options.shards ?? 4)
      .clock(clock);
    if (options.cache !== undefined) config = config.cache(options.cache);
    if (options.logger !== undefined) config = config.logger(options.logger);
    return openOn(config, clock, new MemoryLog(config.settings.shards), options, { seed: options.seed ?? 0, crashes: 0 });
  },
};

async function openOn(
  config: Config,
  clock: VirtualClock,
  log: MemoryLog,
  options: TestEngineOptions,
  crashes: { readonly seed: number; crashes: number },
): Promise<TestEngine> {
  const engine = await Engine.open(config, {
    ...(options.workflows ? { workflows: options.workflows } : {}),
    ...(options.container ? { container: options.container } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    memoryLog: log,
  });
  // A process that restarts registers its workflows again, however it first did: so does the next engine.
  const workflows = new Set(options.workflows);
  const register = engine.register.bind(engine);
  return Object.assign(engine, {
    clock,
    register(...classes: WorkflowClass[]): TestEngine {
      for (const cls of classes) workflows.add(cls);
      return register(...classes) as TestEngine;
    },
    async restart(): Promise<TestEngine> {
      await engine.shutdown();
      return openOn(config, clock, log.reopen(), { ...options, workflows: [...workflows] }, crashes);
    },
    async crash(seed?: number): Promise<TestEngine> {
      const n = crashes.crashes++;
      const pattern = seed === undefined ? [crashes.seed, n] : [seed, 0];
      // Closing first (synchronously) makes the engine write nothing more; then the unsynced data goes.
      const stopped = engine.shutdown();
      const survivor = log.crash((shard) => coin(pattern[0] as number, pattern[1] as number, shard));
      // A crash is what this simulates: whatever the interrupted shutdown says is moot.
      await stopped.catch(() => undefined);
      return openOn(config, clock, survivor, { ...options, workflows: [...workflows] }, crashes);
    },
  }) as TestEngine;
}

/** A fair coin for each (seed, crash, shard), independent across shards: a 32-bit mix of the three. */
function coin(seed: number, crash: number, shard: number): boolean {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(crash + 0x632be5ab, 0xc2b2ae35) ^ Math.imul(shard + 0x7f4a7c15, 0x27d4eb2f);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h & 1) === 1;
}
