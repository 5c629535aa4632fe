import type { ScheduleStateRecord, SystemRecord } from "../journal/system-records.js";
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

/**
 * A snapshot that loses no live instant to a crash that keeps it and not the instant's tick (the
 * live ticker moves the cursor past an instant before its tick is recorded). An instant whose run
 * is being started (`starting`) is carried as being triggered: recovery starts or adopts its run
 * and records it. One not decided yet stays after the cursor, as it is after the cursor the records
 * before the snapshot leave: recovery deals with it as missed.
 */
export function keepUnrecorded(record: ScheduleStateRecord, live: ReadonlySet<number>, starting: ReadonlySet<number>): ScheduleStateRecord {
  if (live.size === 0) return record;
  const beingStarted = [...live].filter((t) => starting.has(t));
  const undecided = [...live].filter((t) => !starting.has(t));
  return {
    ...record,
    cursor: Math.min(record.cursor, ...undecided.map((t) => t - 1)),
    ...(beingStarted.length > 0 ? { triggering: [...(record.triggering ?? []), ...beingStarted] } : {}),
  };
}
