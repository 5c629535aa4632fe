import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { DataDirReader, ExportedJournal, PayloadCipher, ReplayResult, WorkflowClass } from "@fusee/runtime";
import { UsageError } from "./data-dir.js";
import type { Runtime } from "./workflow-modules.js";

/** One run whose journal the new code does not replay, with the first difference. */
export interface FailingRun {
  readonly workflowId: string;
  readonly type: string;
  readonly runId: number;
  readonly status: string;
  /** True for a finished run: its replay (queries, describe of a kept run) fails, but no run in flight does. */
  readonly finished: boolean;
  /** The first difference, or why the journal could not be replayed at all. */
  readonly error: string;
}

/** What replaying the journals of the runs of a data directory or of exports with the new code found. */
export interface JournalCheck {
  /** The data directory, export file or folder of exports. */
  readonly source: string;
  /** Runs in flight replayed (all of them). */
  readonly inFlight: number;
  /** Finished runs replayed (the sample asked for). */
  readonly finished: number;
  /** Runs whose journals the new code does not replay: in flight ones first, then finished ones. */
  readonly failing: readonly FailingRun[];
  readonly durationMs: number;
}

/** Journals replayed at once: replays wait on the event loop, so a few share its turns. */
const CONCURRENCY = 32;

/**
 * Replays with the new code, in this process and with the runtime's own `Replayer`, the journal of
 * every run in flight of a data directory (opened read-only, also while an engine runs on it) or of
 * exports, and of up to `finished` finished runs, most recently started first. A run in flight fails
 * when the code asks for something else than its journal holds, or when its journal holds a result
 * of a step the static check found the new code cannot read (`unreadable`); a finished one also
 * when the code does not end where its journal does.
 */
export async function checkJournals(
  runtime: Runtime,
  classes: readonly WorkflowClass[],
  source: string,
  options: {
    readonly finished: number;
    readonly cipher?: PayloadCipher;
    /** By workflow type and step name: results recorded under a type the new code cannot read, and why. */
    readonly unreadable?: ReadonlyMap<string, ReadonlyMap<string, string>>;
    readonly onRun?: (id: string) => void;
    readonly onTotal?: (n: number) => void;
  },
): Promise<JournalCheck> {
  const started = performance.now();
  const replayer = new runtime.Replayer().register(...classes);
  const failing: FailingRun[] = [];
  const journals = await openJournals(runtime, source, options.finished, options.cipher);
  try {
    options.onTotal?.(journals.ids.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < journals.ids.length) {
        const entry = journals.ids[next++] as { id: string; finished: boolean };
        const failure = await replayOne(replayer, () => journals.read(entry.id), entry.finished, options.unreadable);
        if (failure !== undefined) failing.push(failure);
        options.onRun?.(entry.id);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, journals.ids.length) }, worker));
  } finally {
    await journals.close();
  }
  failing.sort(
    (a, b) => Number(a.finished) - Number(b.finished) || (a.workflowId < b.workflowId ? -1 : a.workflowId > b.workflowId ? 1 : 0),
  );
  const finished = journals.ids.filter((e) => e.finished).length;
  return { source, inFlight: journals.ids.length - finished, finished, failing, durationMs: performance.now() - started };
}

async function replayOne(
  replayer: InstanceType<Runtime["Replayer"]>,
  read: () => Promise<ExportedJournal | undefined>,
  finished: boolean,
  unreadable: ReadonlyMap<string, ReadonlyMap<string, string>> | undefined,
): Promise<FailingRun | undefined> {
  let journal: ExportedJournal | undefined;
  try {
    journal = await read();
  } catch (e) {
    return { workflowId: "", type: "", runId: 0, status: "", finished, error: e instanceof Error ? e.message : String(e) };
  }
  if (journal === undefined) return undefined;
  const result: ReplayResult = await replayer.replay(journal);
  const base = { workflowId: journal.workflowId, type: journal.type, runId: journal.runId, status: journal.status, finished };
  if (!result.ok) return { ...base, error: result.error ?? "the replay failed" };
  if (finished && !result.finished) return { ...base, error: "the code does not end where the journal does (the run's finish)" };
  // A journal that replays may still hold a result the new code reads as it could not have been recorded.
  const steps = unreadable?.get(journal.type);
  const held = steps === undefined ? undefined : journal.records.find((r) => r.kind === "step" && steps.has(String(r["name"])));
  if (held !== undefined && steps !== undefined)
    return {
      ...base,
      error: `it holds a result of step '${String(held["name"])}' that the new code cannot read: ${steps.get(String(held["name"])) ?? ""}`,
    };
  return undefined;
}

/** The runs to replay and how to read each journal, from a data directory, an export file or a folder of exports. */
async function openJournals(
  runtime: Runtime,
  source: string,
  finishedSample: number,
  cipher: PayloadCipher | undefined,
): Promise<{ ids: { id: string; finished: boolean }[]; read(id: string): Promise<ExportedJournal | undefined>; close(): Promise<void> }> {
  if (!existsSync(source)) throw new UsageError(`--against ${source}: no such data directory or export file`);
  if (statSync(source).isDirectory() && existsSync(join(source, "manifest.json"))) {
    const reader: DataDirReader = await runtime.DataDirReader.open(source, cipher === undefined ? {} : { cipher });
    const runs = reader.list({}, Number.MAX_SAFE_INTEGER);
    const inFlight = runs.filter((r) => r.status === "running").map((r) => ({ id: r.id, finished: false }));
    const finished = runs
      .filter((r) => r.status !== "running")
      .slice(0, finishedSample)
      .map((r) => ({ id: r.id, finished: true }));
    return { ids: [...inFlight, ...finished], read: (id) => reader.export(id), close: () => reader.close() };
  }
  const files = statSync(source).isDirectory()
    ? readdirSync(source)
        .filter((n) => n.endsWith(runtime.EXPORT_FILE_SUFFIX))
        .sort()
        .map((n) => join(source, n))
    : [source];
  if (files.length === 0)
    throw new UsageError(`--against ${source}: the folder holds no export files (*${runtime.EXPORT_FILE_SUFFIX}) and is no data directory`);
  const exports = new Map<string, ExportedJournal>();
  for (const file of files) {
    let journal: ExportedJournal;
    try {
      journal = runtime.readExport(file);
    } catch (e) {
      throw new UsageError(`--against: ${e instanceof Error ? e.message : String(e)}`);
    }
    exports.set(journal.workflowId, journal);
  }
  const all = [...exports.values()];
  const unfinished = new Set(["running", "suspended", "parked"]);
  const inFlight = all.filter((j) => unfinished.has(j.status)).map((j) => ({ id: j.workflowId, finished: false }));
  const finished = all
    .filter((j) => !unfinished.has(j.status))
    .sort((a, b) => b.startedAt - a.startedAt)
    .slice(0, finishedSample)
    .map((j) => ({ id: j.workflowId, finished: true }));
  return { ids: [...inFlight, ...finished], read: async (id) => exports.get(id), close: async () => undefined };
}
