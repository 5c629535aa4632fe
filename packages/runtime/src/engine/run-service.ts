/*
 * What the engine's facade, run handles and schedule handles ask of the runs behind them. One
 * process implements it over the shards it holds (`LocalRuns`); in a cluster, `RoutedRuns` sends
 * each call to the process holding the call's shard. Arguments are plain values, so a call can
 * travel between processes as it is: callers resolve defaults (an update's ID, a cancel's reason)
 * before they call.
 */
import type { RunOperations } from "../client/run-operations.js";
import type { ParentLink } from "../journal/records.js";
import type { ListFilter, RunStatus, StartOptions } from "../client/types.js";
import type { ScheduleOp } from "./schedule-handle.js";
import type { Message } from "../workflow/messages.js";
import type { ScheduleDescription } from "./schedule-runtime.js";
import type { ScheduleSettings } from "./schedule-spec.js";

/**
 * The request a call that changes a run performs: a cluster request another process forwarded to
 * the shard's owner, or a message another workflow sent. The records the call appends name it, so
 * a copy of the request (asked again of a shard's next owner, sent again after a crash) is found
 * performed instead of being performed twice.
 */
export interface RequestContext {
  readonly request: string;
}

export type { ParentLink };

/** A debounce rule as it travels: its delays in ms. */
export interface DebounceRule {
  readonly delayMs: number;
  readonly maxWaitMs: number | undefined;
}

/** A batch rule as it travels. */
export interface BatchRule {
  readonly size: number;
  readonly timeoutMs: number;
}

/** The runs of an engine, wherever they are held. */
export interface RunService extends RunOperations {
  start(type: string, id: string, input: unknown, options: StartOptions): Promise<void>;
  /** The update's result; the run is started with it when the ID has no running run. */
  updateWithStart(
    type: string,
    id: string,
    input: unknown,
    update: string,
    arg: unknown,
    options: StartOptions,
    updateId: string,
  ): Promise<unknown>;
  /** Starts the run with the signal in its start record, or signals the ID's running run. */
  signalWithStart(type: string, id: string, input: unknown, signal: string, value: unknown, options: StartOptions): Promise<void>;
  /** Applies a message from workflow code to the run of `target`, once per request. */
  deliver(target: string, message: Message, request: string): Promise<unknown>;
  complete(token: string, value: unknown): Promise<void>;
  fail(token: string, error: Error): Promise<void>;
  /** Starts the run of a parent's child call; resolves with the child's run number. */
  startChild(type: string, id: string, input: unknown, parent: ParentLink): Promise<number>;
  /** The runs of one shard that match the filter, newest first. */
  listShard(shard: number, filter: ListFilter, limit: number): Promise<RunStatus[]>;
  schedule(name: string, settings: ScheduleSettings, paused: boolean): Promise<void>;
  /** The schedules of one shard, by name. */
  listSchedules(shard: number): Promise<ScheduleDescription[]>;
  /** `request`: the forwarded request a trigger performs (see `CallRoute.namedBy`). */
  scheduleOp(name: string, op: ScheduleOp, args: readonly number[], request?: string): Promise<unknown>;
  /** The ID of the run the event's debounce window will start. */
  debounce(type: string, key: string, input: unknown, rule: DebounceRule, eventId: string | undefined): Promise<string>;
  /** The ID of the run the event's batch will start. */
  batch(type: string, key: string, event: unknown, rule: BatchRule, eventId: string | undefined): Promise<string>;
}

/**
 * Where a process sends calls on runs: the run service, and starts made on behalf of the holder of
 * a shard (a schedule's, a debounce or batch key's), which must not land once that holder lost it.
 */
export interface RunRouter extends RunService {
  /**
   * Starts a run as `start` does, for this process as the holder of shard `fence`. A process of a
   * cluster that forwards the start has it performed only while it still holds `fence` at the
   * epoch it holds now; otherwise the start fails with `RejectedError` (reason `lease-lost`) and
   * creates no run.
   */
  startFenced(fence: number, type: string, id: string, input: unknown, options: StartOptions): Promise<void>;
}

/** The names of the service's calls. */
export type RunCall = keyof RunService;
