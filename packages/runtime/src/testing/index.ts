export { TestEngine, type TestEngineOptions } from "./test-engine.js";
export { VirtualClock } from "./virtual-clock.js";
