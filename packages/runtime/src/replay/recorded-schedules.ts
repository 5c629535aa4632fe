import type { Clock } from "../core/clock.js";
import { StorageError } from "../core/errors.js";
import type { PayloadCodec } from "../core/record-codec.js";
import type { FlowRuns } from "../engine/flow-runs.js";
import { ScheduleRuntime, type ScheduleDescription } from "../engine/schedule-runtime.js";
import { ScheduleGenerations } from "../engine/schedule-generations.js";
import { decodeSystemRecord } from "../engine/system-records.js";
import { parseStreamName, SystemLog } from "../engine/system-streams.js";
import type { Log } from "../storage/log.js";

interface RawRecord {
  readonly stream: string;
  readonly generation: number;
  readonly body: Uint8Array;
}

// The reader never shows a schedule's input, so payloads stay unread: schedules of an encrypted
// directory show without its keys.
const UNREAD_PAYLOADS: PayloadCodec = {
  encodeValue: () => new Uint8Array(0),
  decodeValue: () => [undefined],
  encodeError: () => new Uint8Array(0),
  decodeError: () => new Error("unread"),
};

/**
 * Schedules rebuilt from the records of their streams (`$schedule/<name>/<generation>`), as the
 * engine rebuilds them on recovery, without arming anything: the rebuilt schedules only describe
 * themselves.
 */
export class RecordedSchedules {
  /** Each schedule's records, undecoded until asked for, so one unreadable schedule never hides the runs. */
  private readonly recorded = new Map<string, RawRecord[]>();

  constructor(private readonly log: Log) {}

  /** Takes a record of an engine stream, in the order the shard scan yields them; ignores other families. */
  add(stream: string, body: Uint8Array): void {
    const name = parseStreamName(stream);
    if (name === undefined || name.family !== "schedule") return;
    let records = this.recorded.get(name.name);
    if (records === undefined) this.recorded.set(name.name, (records = []));
    // A copy: the scan's bodies are views into its read windows, which would all stay in memory.
    records.push({ stream, generation: name.n, body: body.slice() });
  }

  /**
   * Where each schedule stands at `now`, sorted by name.
   *
   * @throws CodecError when a schedule record cannot be decoded.
   */
  describe(now: number): ScheduleDescription[] {
    const deps = { sys: new SystemLog(this.log, UNREAD_PAYLOADS, 0), runs: NO_RUNS, clock: frozenClock(now), failed: () => undefined };
    const out: ScheduleDescription[] = [];
    for (const [name, raw] of this.recorded) {
      const latest = generationsOf(raw);
      if (latest.state === undefined) continue;
      const schedule = new ScheduleRuntime(name, latest.state, latest.generation, deps);
      for (const record of latest.records) schedule.apply(record);
      out.push(schedule.describe());
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

/** A schedule's records sorted into generations, as the engine sorts them on recovery. */
function generationsOf(raw: readonly RawRecord[]): ScheduleGenerations {
  const positions = new Map<string, number>();
  const generations = new ScheduleGenerations();
  for (const { stream, generation, body } of raw) {
    const position = positions.get(stream) ?? 0;
    positions.set(stream, position + 1);
    generations.add(generation, decodeSystemRecord(body, UNREAD_PAYLOADS, { workflowId: stream, runId: 0, position }));
  }
  return generations;
}

function readOnly(): never {
  throw new StorageError("a data directory reader starts, stops and schedules nothing");
}

const NO_RUNS: FlowRuns = { start: readOnly, awaitResult: readOnly, status: readOnly, terminate: readOnly, cancel: readOnly };

function frozenClock(now: number): Clock {
  return { now: () => now, schedule: readOnly };
}
