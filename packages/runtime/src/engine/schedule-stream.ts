import type { SystemRecord } from "../journal/system-records.js";
import type { SystemLog } from "./system-streams.js";

/** A schedule stream gets a fresh generation, holding one snapshot, after this many records. */
const SNAPSHOT_EVERY = 512;

/** What a schedule's stream needs of its schedule. */
export interface ScheduleStreamDeps {
  readonly sys: SystemLog;
  /** An append failed: the schedules stop. */
  failed(e: unknown): void;
  /** The schedule's whole state now, as the one record of a new generation. */
  snapshot(): SystemRecord;
  /** Lets a snapshot taken on the way go on without waiting; its failures are the schedule's. */
  detach(work: Promise<unknown>): void;
}

/**
 * The records of one schedule, in its stream `$schedule/<name>/<generation>`. The stream stays
 * short: after {@link SNAPSHOT_EVERY} records it moves to a new generation holding one record, the
 * whole state, and drops the old one; recovery reads the latest generation.
 */
export class ScheduleStream {
  private records = 0;
  private dropped = false;

  constructor(
    private readonly name: string,
    private gen: number,
    private readonly deps: ScheduleStreamDeps,
  ) {}

  /** Appends `record`; resolves once durable. Nothing is appended once the stream is dropped. */
  append(record: SystemRecord): Promise<void> {
    if (this.dropped) return Promise.resolve();
    const done = this.deps.sys.append("schedule", this.name, this.gen, record);
    done.catch((e: unknown) => this.deps.failed(e));
    this.records++;
    if (this.records > SNAPSHOT_EVERY) this.deps.detach(this.snapshot());
    return done;
  }

  /** Moves the schedule to a new generation of its stream holding one record, its whole state; drops the old one. */
  async snapshot(): Promise<void> {
    const old = this.gen;
    this.gen++;
    this.records = 0;
    await this.append(this.deps.snapshot());
    if (!this.dropped) await this.deps.sys.drop("schedule", this.name, [old]);
  }

  /** Drops the stream (both generations a snapshot under way may have left). */
  drop(): Promise<void> {
    this.dropped = true;
    const gens = this.gen > 0 ? [this.gen - 1, this.gen] : [this.gen];
    return this.deps.sys.drop("schedule", this.name, gens);
  }
}
