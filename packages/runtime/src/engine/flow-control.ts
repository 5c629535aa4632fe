import type { Clock } from "../core/clock.js";
import type { PayloadCodec } from "../journal/record-codec.js";
import type { Log } from "../storage/log.js";
import { Batcher } from "./batches.js";
import { Debouncer } from "./debounce.js";
import type { FlowRuns } from "./flow-runs.js";
import { Limits } from "./limits.js";
import { Schedules } from "./schedules.js";
import { parseStreamName } from "../journal/stream-names.js";
import { SystemLog } from "./system-streams.js";
import { StorageError } from "../core/errors.js";

/** What flow control needs from the engine that owns it. */
export interface FlowControlDeps {
  readonly log: Log;
  readonly codec: PayloadCodec;
  readonly clock: Clock;
  readonly maxRecordBytes: number;
  readonly runs: FlowRuns;
  /** Storage failed under a flow-control record: the engine stops acknowledging anything. */
  readonly failed: (e: unknown) => void;
  /** Whether this process may still start work for the shard (its lease has not run out). */
  readonly holds: (shard: number) => boolean;
}

/**
 * Flow control and time: limits on steps, schedules, debounced starts and batches. All but limits
 * keep their state in the engine's own streams of the log, which the engine hands over on open.
 */
export class FlowControl {
  readonly limits: Limits;
  readonly schedules: Schedules;
  readonly debouncer: Debouncer;
  readonly batcher: Batcher;
  private readonly sys: SystemLog;

  constructor(deps: FlowControlDeps) {
    this.sys = new SystemLog(deps.log, deps.codec, deps.maxRecordBytes, deps.failed, deps.holds);
    this.limits = new Limits(deps.clock);
    this.schedules = new Schedules({ sys: this.sys, runs: deps.runs, clock: deps.clock, failed: deps.failed });
    this.debouncer = new Debouncer(this.sys, deps.runs, deps.clock, deps.failed);
    this.batcher = new Batcher(this.sys, deps.runs, deps.clock, deps.failed);
  }

  /** Takes a record of an engine stream read by the engine's recovery scan. */
  recover(shard: number, stream: string, body: Uint8Array): void {
    const name = parseStreamName(stream);
    if (name === undefined)
      throw new StorageError(`shard ${shard} holds stream '${stream}', which is reserved for the engine but not one it knows`);
    const record = this.sys.recover(stream, body);
    if (name.family === "schedule") this.schedules.recover(name, record);
    else if (name.family === "debounce") this.debouncer.recover(name, record);
    else this.batcher.recover(name, record);
  }

  /**
   * After recovery (of every shard, or of one a process of a cluster took): arms timers, resumes
   * backfills, catches up missed instants and fires due windows of what was recovered since.
   */
  open(): void {
    this.schedules.open();
    this.debouncer.open();
    this.batcher.open();
  }

  /** Whether records of the engine's own streams are on their way to the log. */
  get writing(): boolean {
    return this.sys.pending > 0;
  }

  /** The shard holding the engine streams of a schedule, or of a debounce or batch key. */
  shardOf(family: "schedule" | "debounce" | "batch", name: string): number {
    return this.sys.shardOf(family, name);
  }

  /** Stops and forgets the schedules and windows of a shard this process of a cluster no longer holds. */
  forget(shard: number): void {
    this.schedules.forget(shard);
    this.debouncer.forget(shard);
    this.batcher.forget(shard);
    this.sys.forget(shard);
  }

  /** Forgets the debounce and batch keys whose windows all fired at or before `cutoff`. */
  async sweep(cutoff: number): Promise<void> {
    await this.debouncer.sweep(cutoff);
    await this.batcher.sweep(cutoff);
  }

  /** Stops every timer and forgets waiting steps; nothing fires after this. */
  close(): void {
    this.limits.close();
    this.schedules.close();
    this.debouncer.close();
    this.batcher.close();
  }
}
