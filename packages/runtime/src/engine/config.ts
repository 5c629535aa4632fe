import type { Clock } from "../core/clock.js";
import { toMillis, type Duration } from "../core/duration.js";
import { ConfigError } from "../core/errors.js";
import { isLogger, type Logger } from "../core/logger.js";
import type { TelemetryOptions } from "../telemetry/telemetry-options.js";
import { MAX_ENTRY_BYTES, type FlushMethod } from "../storage/log.js";
import type { PayloadCipher } from "../codec/cipher.js";
import { tablesOf } from "../storage/postgres/schema.js";

/** Where journals live. */
export type StorageSpec =
  | { readonly kind: "memory" }
  | { readonly kind: "local"; readonly dir: string }
  | ({ readonly kind: "postgres"; readonly url: string } & PostgresOptions);

/** Options of {@link Config.postgres}. */
export interface PostgresOptions {
  /** The schema holding the engine's tables, created and migrated on open; default `"fusee"`. */
  readonly schema?: string;
  /** How long a shard lease lasts without renewal (10 s by default); a restart after a crash waits this long. */
  readonly leaseMs?: number;
  /** This process's name in the lease table; unique per process (by default host, pid and a random tag). */
  readonly owner?: string;
  /**
   * Shares the schema with other engine processes: each holds a fair share of the shards, takes
   * over the shards of a process that stops, and forwards operations on runs of shards it does
   * not hold to their owner. Without it one process holds every shard.
   */
  readonly cluster?: boolean;
  /**
   * With `cluster`: how long an operation context to the process holding a run's shard waits for
   * its answer before it fails with `ForwardTimeoutError` (30 s by default). Waiting for a run's
   * result or start is not bounded by it.
   */
  readonly forwardTimeoutMs?: number;
}

/** @internal What a `Config` holds, as the engine reads it. */
export interface Settings {
  readonly storage: StorageSpec;
  readonly shards: number;
  readonly flush: FlushMethod;
  readonly keepHistory: boolean;
  readonly retentionMs: number | undefined;
  readonly idempotencyWindowMs: number;
  readonly cipher: PayloadCipher | undefined;
  readonly cache: number;
  readonly maxPayloadBytes: number;
  readonly clock: Clock | undefined;
  readonly segmentBytes: number | undefined;
  readonly repair: boolean;
  readonly logger: Logger | undefined;
  readonly telemetry: TelemetryOptions | false;
}

const FLUSH_METHODS: readonly FlushMethod[] = ["fdatasync", "fsync", "dsync", "none"];

/**
 * How an engine stores and runs workflows. Each builder method returns a new `Config`.
 *
 * @example
 * const config = Config.local("./data").shards(4).flush("fdatasync").cache(10_000);
 */
export class Config {
  private constructor(private readonly s: Settings) {}

  /** Nothing on disk: for tests and examples. */
  static memory(): Config {
    return new Config({ ...DEFAULTS, storage: { kind: "memory" }, shards: 1 });
  }

  /** The embedded default: sharded, group-committed log files in `dir`. */
  static local(dir: string): Config {
    if (typeof dir !== "string" || dir.trim() === "") throw new ConfigError("Config.local needs a directory path");
    return new Config({ ...DEFAULTS, storage: { kind: "local", dir } });
  }

  /**
   * Journals in PostgreSQL: the shard log as tables of one schema, each shard written only by the
   * process that holds its lease.
   *
   * @example
   * const config = Config.postgres("postgres://app@db.internal:5432/app", { schema: "orders" }).shards(8);
   */
  static postgres(url: string, options: PostgresOptions = {}): Config {
    if (typeof url !== "string" || url.trim() === "") throw new ConfigError("Config.postgres needs a connection URL");
    if (options.schema !== undefined) tablesOf(options.schema);
    const forward = options.forwardTimeoutMs;
    if (forward !== undefined && (!Number.isFinite(forward) || forward <= 0)) {
      throw new ConfigError(`forwardTimeoutMs must be a positive number of milliseconds; got ${String(forward)}`);
    }
    return new Config({ ...DEFAULTS, storage: { kind: "postgres", url, ...options } });
  }

  /** Number of shards (independent logs synced in parallel); fixed once a data directory exists. */
  shards(n: number): Config {
    if (!Number.isInteger(n) || n < 1 || n > 1024) throw new ConfigError(`shards must be a whole number from 1 to 1024; got ${n}`);
    return this.with({ shards: n });
  }

  /** How appends reach the disk. `"none"` is for tests only: nothing is durable. */
  flush(method: FlushMethod): Config {
    if (!FLUSH_METHODS.includes(method)) throw new ConfigError(`flush must be one of ${FLUSH_METHODS.join(", ")}; got ${String(method)}`);
    return this.with({ flush: method });
  }

  /** Keep finished runs' journals for `describe` (until retention drops them). */
  keepHistory(keep: boolean): Config {
    return this.with({ keepHistory: Boolean(keep) });
  }

  /** How long finished runs stay listed before compaction drops them. */
  retention(d: Duration): Config {
    return this.with({ retentionMs: toMillis(d, "retention") });
  }

  /**
   * How long a workflow ID remembers the requests and update IDs of a run that was replaced (by
   * continue-as-new or a reset): a message another workflow sends again after a crash, a cluster
   * call asked again of a shard's next owner, or an update retried with its ID within this window
   * is answered as the first was, not performed twice. A run remembers its own for as long as it
   * lives; the runs after it remember at most the newest 4,096 of each. The window counts back from
   * the replacement: the next run is handed what was performed within it (a reset also keeps what
   * the part of the journal it copies holds), keeps that for as long as it lives, and hands on again
   * what is still within the window at its own replacement; any other ID is performed again. One
   * day by default.
   *
   * @example
   * Config.local("./data").idempotencyWindow("7 days")
   */
  idempotencyWindow(d: Duration): Config {
    return this.with({ idempotencyWindowMs: toMillis(d, "idempotencyWindow") });
  }

  /** Encrypts every payload (inputs, results, errors, signals, updates, attributes) with this cipher. */
  codec(cipher: PayloadCipher): Config {
    return this.with({ cipher });
  }

  /** At most this many runs stay in memory; the rest are parked and replayed when needed. */
  cache(maxLiveRuns: number): Config {
    if (!Number.isInteger(maxLiveRuns) || maxLiveRuns < 1) throw new ConfigError(`cache must be a whole number ≥ 1; got ${maxLiveRuns}`);
    return this.with({ cache: maxLiveRuns });
  }

  /** The largest encoded record (input, result, signal...) accepted: 2 MiB by default, at most 256 MiB. */
  maxPayloadBytes(bytes: number): Config {
    // Above the logs' own bound an oversized record would be refused by the shard, not by the call.
    if (!Number.isInteger(bytes) || bytes < 1024 || bytes > MAX_ENTRY_BYTES) {
      throw new ConfigError(`maxPayloadBytes must be a whole number from 1024 to ${MAX_ENTRY_BYTES} (256 MiB); got ${bytes}`);
    }
    return this.with({ maxPayloadBytes: bytes });
  }

  /** Size at which a local shard's segment file is sealed and the next begun (64 MiB by default). */
  segmentBytes(bytes: number): Config {
    if (!Number.isInteger(bytes) || bytes < 4096) throw new ConfigError(`segmentBytes must be a whole number ≥ 4096; got ${bytes}`);
    return this.with({ segmentBytes: bytes });
  }

  /**
   * Opens a damaged local data directory instead of refusing it: each shard is cut at its first
   * corruption, discarding it and everything after it in that shard. Every cut is told to
   * `EngineOptions.onEvent` and kept by `engine.recoveryEvents()`. For one open after a refusal
   * that advised it, with a copy of the directory kept; `fusee repair --data DIR` does the same
   * without starting an engine.
   *
   * @example
   * const engine = await Engine.open(Config.local("./data").repair(), {
   *   workflows: [Pay],
   *   onEvent: (e) => console.warn(e),
   * });
   */
  repair(): Config {
    return this.with({ repair: true });
  }

  /** The clock timers run on; the system clock by default (`TestEngine` passes a virtual one). */
  /**
   * Where the engine logs what an operator should know (see `EngineEvent`): a pino or bunyan logger,
   * or anything with `debug`, `info`, `warn` and `error` taking `(fields, message)`. None by
   * default; the same events reach `engine.on("event", ...)` either way.
   *
   * @example
   * Config.local("./data").logger(pino({ name: "fusee" }))
   */
  logger(logger: Logger): Config {
    if (!isLogger(logger)) throw new ConfigError("logger needs debug, info, warn and error methods taking (fields, message), as pino's do");
    return this.with({ logger });
  }

  /**
   * OpenTelemetry: `false` records nothing and never loads `@opentelemetry/api`; providers given
   * here are used instead of the global ones. By default fusee records through the global tracer and
   * meter providers when `@opentelemetry/api` is installed (with no SDK registered, that records
   * nothing). See `docs/observability.md` for the spans and metrics.
   *
   * @example
   * Config.local("./data").telemetry({ tracerProvider, meterProvider })
   * Config.local("./data").telemetry(false)
   */
  telemetry(options: TelemetryOptions | false): Config {
    if (options !== false && (typeof options !== "object" || options === null)) {
      throw new ConfigError("telemetry takes false or { tracerProvider?, meterProvider? }");
    }
    return this.with({ telemetry: options });
  }

  clock(clock: Clock): Config {
    return this.with({ clock });
  }

  /** @internal The settings, for the engine. */
  get settings(): Settings {
    return this.s;
  }

  private with(change: Partial<Settings>): Config {
    return new Config({ ...this.s, ...change });
  }
}

const DEFAULTS: Settings = {
  storage: { kind: "memory" },
  shards: 4,
  flush: "fdatasync",
  keepHistory: false,
  retentionMs: undefined,
  idempotencyWindowMs: 24 * 60 * 60 * 1000,
  cipher: undefined,
  cache: 10_000,
  maxPayloadBytes: 2 * 1024 * 1024,
  clock: undefined,
  logger: undefined,
  telemetry: {},
  segmentBytes: undefined,
  repair: false,
};
