import "reflect-metadata";
export { TestEngine, type TestEngineOptions } from "./test-engine.js";
export { VirtualClock, type VirtualClockOptions } from "./virtual-clock.js";
export * from "../replay/index.js";
export { replayRegressions, type ReplayRegressionsOptions, type DefineTest } from "../replay/replay-regressions.js";
