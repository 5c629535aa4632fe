import "reflect-metadata";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../core/logger.js";
import type { DependencyContainer } from "tsyringe";
import type { TypeRegistry } from "../codec/type-registry.js";
import type { Clock } from "../core/clock.js";
import { ConfigError, NotFoundError, StorageError } from "../core/errors.js";
import { describeRecord } from "../journal/record-kinds.js";
import type { JournalRecord } from "../journal/records.js";
import type { RunDetail } from "../client/types.js";
import { payloadTypes } from "../workflow/payload-types.js";
import { definitionOf, type WorkflowClass, type WorkflowDefinition } from "../workflow/registry.js";
import type { RunHost } from "../workflow/run-executor.js";
import { WaitNotingExecutor, type ReplayWait } from "./code-waits.js";
import type { ExportedJournal } from "./export-format.js";
import { EXPORT_FILE_SUFFIX, readExport } from "./export-file.js";
import { exportJournal, importJournal } from "./export-journal.js";
import { StandInContainer } from "./stand-in-container.js";

/** What a replay of one journal found. */
export interface ReplayResult {
  /** The workflow ID of the journal; empty when its file could not be read. */
  readonly workflowId: string;
  /** The workflow type of the journal; empty when its file could not be read. */
  readonly type: string;
  readonly runId: number;
  /** The export file, for `replayFile` and `replayDir`. */
  readonly file?: string;
  /** True when the code asked for exactly what the journal holds, in the same order. */
  readonly ok: boolean;
  /** True when the journal ends with the run's finish and the code reached it too. */
  readonly finished: boolean;
  /**
   * The first difference, naming the position, what the journal holds and what the code asked for
   * (`the journal holds step 'charge' (call #2), the code asked for step 'refund' (call #2)`), or
   * why the journal could not be replayed at all.
   */
  readonly error?: string;
  /** The error behind `error`: a `NonDeterminismError` for a difference. */
  readonly cause?: Error;
  /** What the code does past the end of the journal, which a replay never runs: `step 'ship' (call #3)`. */
  readonly next: readonly string[];
  /** What the code waits for at the journal's end: signals, conditions and timers; empty once it finished or when it failed. */
  readonly waiting: readonly ReplayWait[];
  /** Records in the journal. */
  readonly records: number;
}

/** Options of the {@link Replayer}. */
export interface ReplayerOptions {
  /**
   * The tsyringe container workflows are resolved from. Without one, each workflow is built with
   * stand-ins for its services (its `Ctx` is the run's): a replay runs no step body, so the
   * services are never called, wherever they live (a NestJS module, say); workflow code that uses
   * one outside a step fails the replay naming it.
   */
  readonly container?: DependencyContainer;
  /** Where payload class names are looked up; the one `registerType` and `@Step({ type })` fill by default. */
  readonly registry?: TypeRegistry;
}

/** Lets every pending turn of the workflow code run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Checks workflow code against exported journals: replays each journal through the current code and
 * reports the first place where the code asks for something else than the journal holds. A replay
 * runs no step (results come from the journal), starts no child, touches no storage, and ends at
 * the end of the journal even when the workflow would wait there.
 *
 * @example
 * const replayer = new Replayer().register(Pay);
 * const result = await replayer.replayFile("journals/pay-1.json");
 * if (!result.ok) throw new Error(result.error);   // "... the journal holds step 'charge' (call #2), the code asked for step 'refund' ..."
 */
export class Replayer {
  private readonly types = new Map<string, WorkflowDefinition>();
  private readonly container: DependencyContainer;
  private readonly registry: TypeRegistry;

  constructor(options: ReplayerOptions = {}) {
    this.container = options.container ?? new StandInContainer();
    this.registry = options.registry ?? payloadTypes;
  }

  /** Registers the workflow classes whose journals this replayer replays. */
  register(...classes: WorkflowClass[]): this {
    for (const cls of classes) {
      const def = definitionOf(cls);
      const known = this.types.get(def.name);
      if (known !== undefined && known.cls !== cls) {
        throw new ConfigError(
          `two workflow classes are named '${def.name}' (${known.cls.name} and ${cls.name}); give one another name with @Workflow("...")`,
        );
      }
      this.types.set(def.name, def);
    }
    return this;
  }

  /**
   * Replays one journal through the registered code: an export, or a run's detail as
   * `engine.describe(id)` returns it. Never rejects: every problem is in the result.
   */
  async replay(source: ExportedJournal | RunDetail): Promise<ReplayResult> {
    let journal: ExportedJournal;
    if ("journal" in source) {
      try {
        journal = exportJournal(source, { registry: this.registry });
      } catch (e) {
        const cause = e as Error;
        return {
          workflowId: source.id,
          type: source.type,
          runId: source.runId,
          ok: false,
          finished: false,
          error: cause.message,
          cause,
          next: [],
          waiting: [],
          records: source.journal.length,
        };
      }
    } else {
      journal = source;
    }
    const base = { workflowId: journal.workflowId, type: journal.type, runId: journal.runId, records: journal.records.length };
    const failed = (cause: Error): ReplayResult => ({
      ...base,
      ok: false,
      finished: false,
      error: cause.message,
      cause,
      next: [],
      waiting: [],
    });
    const def = this.types.get(journal.type);
    if (def === undefined) {
      const names = [...this.types.keys()].map((n) => `'${n}'`).join(", ") || "none";
      return failed(
        new NotFoundError(
          `workflow type '${journal.type}' of '${journal.workflowId}' is not registered with this Replayer (registered: ${names})`,
        ),
      );
    }
    let records: JournalRecord[];
    try {
      records = importJournal(journal, this.registry);
    } catch (e) {
      return failed(e as Error);
    }
    const next: string[] = [];
    const standIns = this.container instanceof StandInContainer ? this.container.createChildContainer() : undefined;
    const executor = new WaitNotingExecutor(def, standIns ?? this.container, replayHost(journal, records, next));
    executor.load(records);
    await executor.whenIdle();
    // Past the journal's end the code may still take a few turns before it waits or finishes.
    for (let i = 0; i < 3; i++) await settle();
    // A stand-in the code touched is the cause of whatever difference followed.
    const refused = standIns?.refusal();
    if (refused !== undefined) return { ...failed(refused), next };
    if (executor.broken) return { ...failed(executor.broken), next };
    return { ...base, ok: true, finished: executor.finished !== undefined, next, waiting: executor.waits(records) };
  }

  /**
   * Reads an export file and replays it.
   *
   * @throws CodecError or StorageError naming the file when it is not a readable export.
   */
  async replayFile(file: string): Promise<ReplayResult> {
    const result = await this.replay(readExport(file));
    return { ...result, file };
  }

  /**
   * Replays every export file (`*.json`) of a folder, in name order. A file that is not a readable
   * export gives a result with `ok: false` and the reason, so one bad file hides no other.
   *
   * @throws StorageError when the folder cannot be read.
   */
  async replayDir(dir: string): Promise<ReplayResult[]> {
    const results: ReplayResult[] = [];
    for (const file of exportFilesIn(dir)) {
      try {
        results.push(await this.replayFile(file));
      } catch (e) {
        const cause = e as Error;
        results.push({
          workflowId: "",
          type: "",
          runId: 0,
          file,
          ok: false,
          finished: false,
          error: cause.message,
          cause,
          next: [],
          waiting: [],
          records: 0,
        });
      }
    }
    return results;
  }
}

/** The export files of a folder, in name order. */
export function exportFilesIn(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw new StorageError(`could not read the folder of exports ${dir}: ${(e as Error).message}`, { cause: e });
  }
  return names
    .filter((n) => n.endsWith(EXPORT_FILE_SUFFIX))
    .sort()
    .map((n) => join(dir, n));
}

/**
 * A host under which nothing happens: records the code would append, steps it would run and children
 * it would start are only noted in `next`, and time stands at the journal's last record.
 */
const SILENT: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function replayHost(journal: ExportedJournal, records: readonly JournalRecord[], next: string[]): RunHost {
  const now = records.at(-1)?.at ?? journal.startedAt;
  const clock: Clock = { now: () => now, schedule: () => ({ cancel: () => undefined }) };
  return {
    workflowId: journal.workflowId,
    runId: journal.runId,
    clock,
    // A replay check writes nothing, not even the lines of code past the journal's end.
    logger: SILENT,
    append: (record) => next.push(describeRecord(record)),
    cancelTimer: () => undefined,
    closed: () => false,
    changed: () => undefined,
    startChild: (request) => next.push(`child '${request.id}' of type ${request.type} (call #${request.seq})`),
    continueAsNew: () => next.push("continue-as-new"),
    closeChild: () => undefined,
    // Steps never run under a replay check (skipStep), and messages are sent by steps only.
    deliver: () => Promise.reject(new Error("a replay check sends no messages")),
    skipStep: (seq, name) => next.push(`step '${name}' (call #${seq})`),
  };
}
