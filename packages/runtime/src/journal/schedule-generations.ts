import type { ScheduleStateRecord, SystemRecord } from "./system-records.js";

/**
 * One schedule's records, taken in log order and sorted into the generation that counts. Each
 * generation of a schedule's streams starts with a snapshot of its whole state, so the records of
 * older generations (not dropped yet when the process stopped) are stale. The engine rebuilds its
 * schedules this way on open, and the data-directory reader describes them the same way.
 */
export class ScheduleGenerations {
  /** The newest generation with a snapshot; meaningless while `state` is undefined. */
  generation = 0;
  /** That generation's snapshot. */
  state: ScheduleStateRecord | undefined = undefined;
  /** That generation's records after its snapshot, in order. */
  readonly records: SystemRecord[] = [];
  /** Older generations met, to be dropped. */
  readonly stale: number[] = [];

  add(generation: number, record: SystemRecord): void {
    if (record.kind === "schedule-state" && (this.state === undefined || generation > this.generation)) {
      if (this.state !== undefined) this.stale.push(this.generation);
      this.generation = generation;
      this.state = record;
      this.records.length = 0;
      return;
    }
    if (this.state === undefined) return;
    if (generation === this.generation) this.records.push(record);
    else if (!this.stale.includes(generation)) this.stale.push(generation);
  }
}
