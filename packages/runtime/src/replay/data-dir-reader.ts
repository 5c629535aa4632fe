import type { PayloadCipher } from "../codec/cipher.js";
import type { TypeRegistry } from "../codec/type-registry.js";
import { FuseeError, StorageError } from "../core/errors.js";
import { SYSTEM_STREAM_PREFIX } from "../core/ids.js";
import { readRecordHeader } from "../journal/record-codec.js";
import { RUN_STATUSES, type FinishedStatus, type RunStatusValue } from "../core/status.js";
import type { ListFilter, RunStatus } from "../client/types.js";
import { checkFilter, matches } from "../journal/list-filter.js";
import { parseStream } from "../journal/stream-names.js";
import type { JournalRecord } from "../journal/records.js";
import { foldRecord, type RunFold } from "../journal/run-fold.js";
import { type RecoveryCutEvent, recoveryCuts } from "../storage/recovery-cuts.js";
import type { Log } from "../storage/log.js";
import { type LocalLog, openLocalLog } from "../storage/local-log.js";
import type { FileLayer } from "../storage/file-layer.js";
import type { ScheduleDescription } from "../journal/schedule-state.js";
import { payloadTypes } from "../workflow/payload-types.js";
import { EXPORT_FORMAT, type ExportedJournal, type ExportedRecord } from "./export-format.js";
import { exportedRecordOf, importRecord, plainCodec } from "./export-journal.js";
import { RecordedSchedules } from "./recorded-schedules.js";

/** Options of {@link DataDirReader.open} and `exportFromDir`. */
export interface DataDirOptions {
  /** Opens encrypted payloads; the same cipher (or one holding the same keys) the engine was configured with. */
  readonly cipher?: PayloadCipher;
  /** Where payload class names are looked up (for search attributes); the one `registerType` fills by default. */
  readonly registry?: TypeRegistry;
  /** @internal The file system to read through; tests read a simulated disk. */
  readonly fileLayer?: FileLayer;
}

/**
 * The statuses a reader reports, in the order pages and filters list them: every status but
 * `suspended` and `parked`, as from outside the engine waiting and working look the same.
 */
export const DATA_DIR_STATUSES: readonly RunStatusValue[] = RUN_STATUSES.filter((s) => s !== "suspended" && s !== "parked");

/** A run as a reader of a data directory sees it. */
export interface DataDirRun extends RunStatus {
  /** Records in the run's journal. */
  readonly records: number;
  /** Why the run's search attributes could not be read (encrypted without a cipher, an unknown class). */
  readonly attributesError?: string;
  /** For a child run: the workflow ID and run number of the parent that started it. */
  readonly parent?: { readonly id: string; readonly runId: number };
  /** For a run a schedule of the directory started: the schedule's name and the instant the run is for. */
  readonly schedule?: { readonly name: string; readonly instant: number };
}

/** A patch record of a run's journal: `ctx.patched(id)` took the new code path at `at`. */
export interface DataDirPatch {
  readonly id: string;
  /** When the record was written, in ms since the epoch. */
  readonly at: number;
}

interface Entry {
  readonly id: string;
  readonly shard: number;
  readonly stream: string;
  type: string;
  runId: number;
  startedAt: number;
  finished: FinishedStatus | undefined;
  endedAt: number | undefined;
  records: number;
  attributes: Record<string, unknown>;
  attributesError: string | undefined;
  patches: DataDirPatch[];
  parent: { readonly id: string; readonly runId: number } | undefined;
  /** Why the engine found the run unable to go on, until it went on again. */
  stopped: { readonly code: string; readonly message: string } | undefined;
  /**
   * For a reset: the records after the start that copy the replaced run's journal, and that run,
   * which stays the current one when a power loss cut the copy short (the engine drops the copy).
   */
  copy?: { readonly copied: number; readonly replaces: Entry | undefined };
}

/** How the fold of a run's records lands in a reader's entry (the engine's index folds the same way). */
const READER_FOLD: RunFold<Entry> = {
  attributesOf: (entry) => entry.attributes,
  setAttributes: (entry, attributes) => {
    entry.attributes = attributes;
  },
  finished: (entry, status, at) => {
    entry.finished = status;
    entry.endedAt = at;
  },
  stopped: (entry, reason) => {
    entry.stopped = reason;
  },
  patched: (entry, id, at) => void entry.patches.push({ id, at }),
};

// A segment named by the directory listing may be compacted away before it is opened.
const OPEN_ATTEMPTS = 5;

/**
 * Reads a data directory beside the engine that may be running on it: opens the log read-only (no
 * lock, nothing written), so it sees a consistent snapshot of the moment it was opened. A write the
 * running engine has not finished is left out; with no engine running, a write torn by a crash is
 * left out too and reported by {@link DataDirReader.recoveryEvents}, and damaged data is refused,
 * as the engine's own open would. It indexes the runs from record headers and the schedules from
 * their streams, and reads journals on demand.
 *
 * @example
 * const reader = await DataDirReader.open("./data");
 * try {
 *   for (const run of reader.list({ status: "failed" }, 20)) console.log(run.id, run.type);
 *   const journal = await reader.export("pay-1");
 *   for (const s of reader.schedules()) console.log(s.name, s.paused, s.nextTimes);
 * } finally {
 *   await reader.close();
 * }
 */
export class DataDirReader {
  private readonly runs = new Map<string, Entry>();
  private readonly recordedSchedules: RecordedSchedules;

  private constructor(
    /** The data directory. */
    readonly dir: string,
    private readonly log: Log,
    private readonly options: DataDirOptions,
    private readonly cuts: readonly RecoveryCutEvent[],
  ) {
    this.recordedSchedules = new RecordedSchedules();
  }

  /**
   * Opens a data directory for reading and indexes its runs.
   *
   * @throws StorageError when `dir` is not a fusee data directory or a shard is damaged (naming
   * shard, segment file and offset).
   */
  static async open(dir: string, options: DataDirOptions = {}): Promise<DataDirReader> {
    let log: LocalLog | undefined;
    for (let attempt = 1; log === undefined; attempt++) {
      try {
        log = await openLocalLog({ dir, readOnly: true, ...(options.fileLayer ? { fileLayer: options.fileLayer } : {}) });
      } catch (e) {
        if (attempt >= OPEN_ATTEMPTS || (e as NodeJS.ErrnoException)?.code !== "ENOENT") throw asStorageError(e, dir);
      }
    }
    const reader = new DataDirReader(dir, log, options, recoveryCuts(log));
    try {
      await reader.index();
    } catch (e) {
      await log.close();
      throw e;
    }
    return reader;
  }

  /**
   * Runs (the latest run of each workflow ID) whose fields match the filter, most recently started
   * first. The filter is the one of `engine.listWhere`. A run that has not finished shows as
   * `running`: from outside the engine, waiting and working look the same.
   */
  list(filter: ListFilter = {}, limit = 100): DataDirRun[] {
    checkFilter(filter);
    const out: DataDirRun[] = [];
    for (const entry of this.runs.values()) {
      const run = this.statusOf(entry);
      if (matches(run, filter)) out.push(run);
    }
    out.sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? -1 : 1));
    return out.slice(0, Math.max(0, limit));
  }

  /** The directory's shard count, fixed for the life of the data (what `Config.local(dir).shards(n)` must say). */
  get shardCount(): number {
    return this.log.shardCount;
  }

  /** The latest run of a workflow ID, or `undefined` when the directory has none. */
  status(id: string): DataDirRun | undefined {
    const entry = this.runs.get(id);
    return entry === undefined ? undefined : this.statusOf(entry);
  }

  /**
   * The patch records of the latest run of a workflow ID, in journal order, or `undefined` when the
   * directory has none. They come from record headers, so no cipher is needed even when payloads
   * are encrypted.
   *
   * @example
   * const taken = reader.patches("pay-1")?.map((p) => p.id); // ["add-fee"]
   */
  patches(id: string): readonly DataDirPatch[] | undefined {
    return this.runs.get(id)?.patches;
  }

  /**
   * The export of the latest run of a workflow ID, or `undefined` when the directory has none.
   *
   * @throws CodecError when a payload is encrypted and no cipher (or not its key) was given.
   */
  async export(id: string): Promise<ExportedJournal | undefined> {
    const entry = this.runs.get(id);
    if (entry === undefined) return undefined;
    const entries = (await this.log.read(entry.shard, entry.stream)).slice(0, entry.records);
    const records: ExportedRecord[] = entries.map((e, position) =>
      exportedRecordOf(e.body, this.options.cipher, { workflowId: id, runId: entry.runId, position }, `record ${position} of '${id}'`),
    );
    return {
      format: EXPORT_FORMAT,
      workflowId: id,
      type: entry.type,
      runId: entry.runId,
      status: statusValue(entry),
      startedAt: entry.startedAt,
      ...(entry.endedAt !== undefined ? { endedAt: entry.endedAt } : {}),
      records,
    };
  }

  /**
   * The schedules of the directory, sorted by name, as `schedule.describe()` would show them at
   * `now` (the next instants are counted from it). `running` lists the runs the schedule last
   * recorded as unfinished; `lastError` is never set, as start failures are not recorded. Inputs
   * are not read, so no cipher is needed.
   *
   * @throws CodecError when a schedule record cannot be decoded (written by a newer fusee).
   * @example
   * for (const s of reader.schedules()) console.log(s.name, s.workflow, s.paused ? "paused" : s.nextTimes[0]);
   */
  schedules(now: number = Date.now()): ScheduleDescription[] {
    return this.recordedSchedules.describe(now);
  }

  /**
   * The writes torn by a crash that this reader left out, one event per shard cut, when no engine
   * was running on the directory. Nothing was changed on disk: the next engine open cuts them and
   * reports them again.
   *
   * @example
   * for (const cut of reader.recoveryEvents()) console.warn(`shard ${cut.shard}: ${cut.discardedBytes} bytes left out at ${cut.segment}:${cut.offset}`);
   */
  recoveryEvents(): readonly RecoveryCutEvent[] {
    return this.cuts;
  }

  /** Releases the directory's files. */
  async close(): Promise<void> {
    await this.log.close();
  }

  private async index(): Promise<void> {
    for (let shard = 0; shard < this.log.shardCount; shard++) {
      const copies: Entry[] = [];
      for await (const batch of this.log.scanBatches(shard))
        for (const item of batch) {
          // The engine's own streams (schedules, debounce windows, batches) hold no run journals.
          if (item.stream.startsWith(SYSTEM_STREAM_PREFIX)) {
            this.recordedSchedules.add(item.stream, item.body);
            continue;
          }
          const run = parseStream(item.stream);
          if (run === undefined) continue;
          const header = readRecordHeader(item.body);
          let entry = this.runs.get(run.id);
          if (entry !== undefined && run.runId < entry.runId) continue;
          if (header.kind === "start") {
            if (entry === undefined || run.runId > entry.runId) {
              entry = {
                id: run.id,
                shard,
                stream: item.stream,
                type: String(header["type"]),
                runId: run.runId,
                startedAt: Number(header.at),
                finished: undefined,
                endedAt: undefined,
                records: 0,
                attributes: {},
                attributesError: undefined,
                patches: [],
                parent: parentOf(header["parent"]),
                stopped: undefined,
                ...(typeof header["copied"] === "number" ? { copy: { copied: header["copied"], replaces: entry } } : {}),
              };
              this.runs.set(run.id, entry);
              if (entry.copy !== undefined) copies.push(entry);
            }
          } else if (entry === undefined || run.runId !== entry.runId) {
            continue;
          }
          const position = entry.records++;
          // Attribute values are in the payload: those records are decoded, the rest folded from their headers.
          const attributes = header.kind === "attributes" || (header.kind === "start" && header["attributes"] === true);
          const record = attributes ? this.decoded(entry, item.body, position) : header;
          if (record !== undefined) foldRecord(entry, record, READER_FOLD);
        }
      // A copy a power loss cut short: that run never began, the run it was to replace is current.
      for (const entry of copies) {
        const { copied, replaces } = entry.copy as NonNullable<Entry["copy"]>;
        delete entry.copy;
        if (entry.records > copied || this.runs.get(entry.id) !== entry) continue;
        if (replaces === undefined) this.runs.delete(entry.id);
        else this.runs.set(entry.id, replaces);
      }
    }
  }

  private statusOf(entry: Entry): DataDirRun {
    const schedule = this.recordedSchedules.instantOf(entry.id);
    return {
      id: entry.id,
      type: entry.type,
      runId: entry.runId,
      status: statusValue(entry),
      startedAt: entry.startedAt,
      ...(entry.endedAt !== undefined ? { endedAt: entry.endedAt } : {}),
      attributes: entry.attributes,
      records: entry.records,
      ...(entry.finished === undefined && entry.stopped !== undefined ? { error: entry.stopped.message } : {}),
      ...(entry.attributesError !== undefined ? { attributesError: entry.attributesError } : {}),
      ...(entry.parent !== undefined ? { parent: entry.parent } : {}),
      ...(schedule !== undefined ? { schedule } : {}),
    };
  }

  /** Record `position` of the entry's run, decoded; undefined (and the entry's attributes marked unreadable) when it cannot be. */
  private decoded(entry: Entry, body: Uint8Array, position: number): JournalRecord | undefined {
    if (entry.attributesError !== undefined) return undefined;
    const context = { workflowId: entry.id, runId: entry.runId, position };
    try {
      const exported = exportedRecordOf(body, this.options.cipher, context, `record ${position} of '${entry.id}'`);
      return importRecord(exported, plainCodec(this.options.registry ?? payloadTypes), context, `'${entry.id}'`);
    } catch (e) {
      entry.attributesError = (e as Error)?.message ?? String(e);
      return undefined;
    }
  }
}

function statusValue(entry: Entry): RunStatusValue {
  return entry.finished ?? (entry.stopped !== undefined ? "stopped" : "running");
}

function parentOf(field: unknown): Entry["parent"] {
  if (typeof field !== "object" || field === null) return undefined;
  const { id, runId } = field as Record<string, unknown>;
  return typeof id === "string" && typeof runId === "number" ? { id, runId } : undefined;
}

function asStorageError(e: unknown, dir: string): Error {
  if (e instanceof FuseeError) return e;
  return new StorageError(`could not read the data directory ${dir}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
}
