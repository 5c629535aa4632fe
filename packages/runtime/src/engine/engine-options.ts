import type { DependencyContainer } from "tsyringe";
import type { FileLayer } from "../storage/file-layer.js";
import type { MemoryLog } from "../storage/memory-log.js";
import type { WorkflowClass } from "../workflow/registry.js";
import type { EngineEvent } from "./engine-events.js";
import type { LimitSpec } from "./limits.js";

/** What `Engine.describeEngine` reports. */
export interface EngineDescription {
  readonly storage: "memory" | "local" | "postgres";
  readonly shards: number;
  /** Runs in this process's index (in a cluster, those of the shards it holds). */
  readonly runs: number;
  /** Runs whose executor is in memory (at most `Config.cache`). */
  readonly liveRuns: number;
  /** Present with `Config.codec`: the keys and the payloads each has sealed since the data was created. */
  readonly codec?: {
    readonly algorithm: string;
    readonly encryptingKeyId: string;
    readonly keyIds: readonly string[];
    readonly sealed: Readonly<Record<string, number>>;
    /** The most payloads one key may seal; the engine refuses to seal past it. */
    readonly limit: number;
  };
}

/** Options of `Engine.open`. */
export interface EngineOptions {
  /** Workflow classes to register at once (more with `engine.register`). */
  workflows?: readonly WorkflowClass[];
  /** The tsyringe container workflows are resolved from; the root container by default. */
  container?: DependencyContainer;
  /** Limits declared before any run resumes, so resumed steps find them (more with `engine.limit`). */
  limits?: Readonly<Record<string, LimitSpec>>;
  /**
   * Told of every engine event (see {@link EngineEvent}), from what opening the storage found and
   * did, such as each cut recovery made (those are also kept by `engine.recoveryEvents()`), onwards.
   */
  onEvent?: (event: EngineEvent) => void;
  /**
   * @internal The file layer a local engine's log reads and writes through, for tests that make a
   * write or a sync fail under running workflows.
   */
  fileLayer?: FileLayer;
  /** @internal The log of a memory engine, for a test engine that restarts on the same data. */
  memoryLog?: MemoryLog;
  /**
   * @internal How a local engine's open indexes its runs: `"one-pass"` (the default) while the log
   * recovers, `"two-pass"` by a scan of the journals after it, for tests that compare the two.
   */
  recoveryPasses?: "one-pass" | "two-pass";
}

/** Options of `Engine.idle`. */
export interface IdleOptions {
  /** `"wait"` (the default) waits for step attempts whose code runs; `"ignore"` does not. */
  readonly runningSteps?: "wait" | "ignore";
  /** Stops waiting (the promise resolves) once aborted. */
  readonly signal?: AbortSignal;
}
