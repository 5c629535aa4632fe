import {
  FuseeError,
  NotFoundError,
  type DataDirReader,
  type DataDirRun,
  type ExportedJournal,
  type ReplayResult,
  type ScheduleDescription,
} from "@fusee/runtime";
import { journalEvents, type JournalEvent } from "./journal-events.js";

/**
 * Replays a run's journal through the workflow code `fusee ui` was given (`--workflows`), to learn
 * what the code waits for; a replay runs no step and writes nothing.
 */
export type CodeReplay = (journal: ExportedJournal) => Promise<ReplayResult>;

/** What a run's page shows, read from the directory in one go. */
export interface RunView {
  readonly run: DataDirRun;
  readonly journal: ExportedJournal | undefined;
  /** Why the journal could not be read (encrypted payloads without `--keys`). */
  readonly journalError: string | undefined;
  readonly events: readonly JournalEvent[];
  /** Every run of the directory, for the run's family and its schedule's other runs. */
  readonly runs: readonly DataDirRun[];
  /** The schedule that started the run, when it still exists. */
  readonly schedule: ScheduleDescription | undefined;
  /**
   * What a replay through the given code found, for an unfinished run; `error` when the replay could
   * not run; `undefined` without code or for a finished run.
   */
  readonly replay: { readonly result: ReplayResult } | { readonly error: string } | undefined;
  /** Whether `fusee ui` was given workflow code. */
  readonly codeGiven: boolean;
  readonly now: number;
}

/**
 * Reads what the page of run `id` shows.
 *
 * @throws NotFoundError when the directory has no run of that ID.
 */
export async function loadRunView(reader: DataDirReader, id: string, replay: CodeReplay | undefined): Promise<RunView> {
  const run = reader.status(id);
  if (run === undefined) throw new NotFoundError(`no run has the workflow ID '${id}' in ${reader.dir}`);
  let journal: ExportedJournal | undefined;
  let journalError: string | undefined;
  try {
    journal = await reader.export(id);
  } catch (e) {
    // The rest of the page shows even when the journal needs keys the server was not given.
    if (!(e instanceof FuseeError)) throw e;
    journalError = e.message;
  }
  const schedule = run.schedule === undefined ? undefined : reader.schedules().find((s) => s.name === run.schedule?.name);
  return {
    run,
    journal,
    journalError,
    events: journal === undefined ? [] : journalEvents(journal.records),
    runs: reader.list({}, Number.MAX_SAFE_INTEGER),
    schedule,
    replay: replay === undefined || journal === undefined || run.endedAt !== undefined ? undefined : await replayed(replay, journal),
    codeGiven: replay !== undefined,
    now: Date.now(),
  };
}

async function replayed(replay: CodeReplay, journal: ExportedJournal): Promise<RunView["replay"]> {
  try {
    return { result: await replay(journal) };
  } catch (e) {
    return { error: (e as Error)?.message ?? String(e) };
  }
}
