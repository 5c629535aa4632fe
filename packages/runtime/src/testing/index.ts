/**
 * The test engine (in memory, on a virtual clock, with restart and crash), the virtual clock, and replay of recorded journals.
 *
 * @module @fusee/runtime/testing
 */
import "reflect-metadata";
export { TestEngine, type TestEngineOptions } from "./test-engine.js";
export { VirtualClock, type VirtualClockOptions } from "./virtual-clock.js";
export * from "../replay/index.js";
export { replayRegressions, type ReplayRegressionsOptions, type DefineTest } from "../replay/replay-regressions.js";
