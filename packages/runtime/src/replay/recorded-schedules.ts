import type { PayloadCodec } from "../journal/payload-codec.js";
import { ScheduleGenerations } from "../journal/schedule-generations.js";
import { ScheduleState, scheduleRunId, type ScheduleDescription } from "../journal/schedule-state.js";
import { parseStreamName } from "../journal/stream-names.js";
import { decodeSystemRecord } from "../journal/system-records.js";

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
 * Schedules rebuilt from the records of their streams (`$schedule/<name>/<generation>`) by the same
 * fold the engine's schedules apply on recovery, without arming anything: they only describe themselves.
 */
export class RecordedSchedules {
  /** Each schedule's records, undecoded until asked for, so one unreadable schedule never hides the runs. */
  private readonly recorded = new Map<string, RawRecord[]>();

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
   * The schedule and instant a run ID names when a schedule of the directory started it
   * (`<schedule>@<instantMs>`), or `undefined` for any other ID.
   */
  instantOf(id: string): { name: string; instant: number } | undefined {
    const at = id.lastIndexOf("@");
    if (at <= 0) return undefined;
    const name = id.slice(0, at);
    const instant = Number(id.slice(at + 1));
    if (!this.recorded.has(name) || !Number.isSafeInteger(instant) || scheduleRunId(name, instant) !== id) return undefined;
    return { name, instant };
  }

  /**
   * Where each schedule stands at `now`, sorted by name.
   *
   * @throws CodecError when a schedule record cannot be decoded.
   */
  describe(now: number): ScheduleDescription[] {
    const out: ScheduleDescription[] = [];
    for (const [name, raw] of this.recorded) {
      const latest = generationsOf(raw);
      if (latest.state === undefined) continue;
      const schedule = new ScheduleState(name, latest.state);
      for (const record of latest.records) schedule.apply(record);
      out.push(schedule.describeAt(now));
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
