import { relative, resolve } from "node:path";
import type { BreakingChange, GenerateOptions, GenerateResult, Watcher } from "@fusee/compiler";
import { type Command, InvalidArgumentError, Option } from "commander";
import { cipherFrom, UsageError } from "../data-dir.js";
import { EXIT_CODES, ExitCode } from "../exit-codes.js";
import { type Io, paint } from "../io.js";
import { checkJournals, type JournalCheck } from "../journal-check.js";
import { Progress } from "../progress.js";
import { loadWorkflows } from "../workflow-modules.js";
import type { CommandContext } from "./command-context.js";

interface GenFlags {
  project: string;
  out?: string;
  check?: boolean;
  watch?: boolean;
  acceptBreaking?: boolean;
  json?: boolean;
  against?: string;
  workflows?: string[];
  finished?: number;
  keys?: string;
}

/** Why a check failed; `--json` says it in `failure`. */
type Failure = "source" | "breaking" | "possibly-breaking" | "stale";

const FAILURE_CODES: Readonly<Record<Failure, ExitCode>> = {
  source: ExitCode.Source,
  breaking: ExitCode.Breaking,
  stale: ExitCode.Stale,
  "possibly-breaking": ExitCode.PossiblyBreaking,
};

/** Shown in gen's help: the exit codes gen ends with, from the one table of them. */
const GEN_EXIT_CODES = EXIT_CODES.filter((e) => e.code !== ExitCode.Failed)
  .map((e) => `  ${e.code}  ${e.meaning}`)
  .join("\n");

/** `fusee gen`: typed clients, the worker type table and fusee.lock.json from the project's workflows. */
export function genCommand(program: Command, context: CommandContext): void {
  program
    .command("gen")
    .description("Generate typed workflow clients, the worker type table and fusee.lock.json from the project's @Workflow classes.")
    .option("-p, --project <dir>", "project folder holding tsconfig.json, or a tsconfig file", ".")
    .option("-o, --out <file>", 'client file to write (default: "out" in fusee.config.json, else src/fusee.generated.ts)')
    .addOption(
      new Option(
        "--check",
        "write nothing; exit 4 when a file is stale, 5 when a change breaks replay, 7 when it may on some paths",
      ).conflicts("watch"),
    )
    .option("-w, --watch", "regenerate whenever a source file changes, until interrupted")
    .option("--accept-breaking", "record replay-breaking changes; only when no runs of the workflows concerned are in flight")
    .addOption(
      new Option(
        "--against <path>",
        "with --check: also replay the journal of every run in flight of a data directory (read only), an export file or a folder of exports",
      ).conflicts("watch"),
    )
    .option(
      "--workflows <module>",
      "with --against: compiled module exporting the new @Workflow classes (repeat for more modules)",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option("--finished <n>", "with --against: also replay up to n finished runs, most recently started first", parseCount, 0)
    .option("--keys <file>", 'with --against: JSON file of the payload keys, { "k1": "<base64 of 32 bytes>" }, for encrypted payloads')
    .option("--json", "print results as JSON (one object per generation with --watch)")
    .addHelpText(
      "after",
      `
A change that runs recorded in fusee.lock.json could not replay (a step inserted, removed, renamed or
reordered, called with other arguments, a result type changed incompatibly) must be guarded by
if (ctx.patched("id")) { ... } with the ID declared in @Workflow({ patches: ["id"] }); gen refuses to
record it otherwise. A change that breaks only the runs that took some path (a new branch, a loop
that ran) is "possibly breaking": reported with the condition, written, and exit 7 with --check.

A change after the last point where a run can wait reaches finished runs only: it is reported
("finished runs only") and does not fail the check.

--check --against DIR|FILE --workflows MODULE replays the journal of each run in flight (and with
--finished n, of n finished runs) with the new code, in this process, and names each run that would
fail with its first difference: exit 5 when one would.

Exit codes:
${GEN_EXIT_CODES}
With --json, "failure" says the same: "source", "breaking", "stale" or "possibly-breaking".`,
    )
    .action(async (flags: GenFlags) => {
      context.exitCode = await runGen(flags, context.io);
    });
}

function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("expected a whole number, 0 or more");
  return n;
}

/** The compiler, loaded by `gen` alone: it brings TypeScript, which no other command needs. */
type Compiler = typeof import("@fusee/compiler");

async function runGen(flags: GenFlags, io: Io): Promise<number> {
  const compiler = await import("@fusee/compiler");
  const report = new Reporter(io, flags.json === true, compiler);
  if (flags.against === undefined && (flags.workflows !== undefined || flags.finished !== 0 || flags.keys !== undefined))
    return report.usage("--workflows, --finished and --keys go with --against");
  if (flags.against !== undefined && flags.check !== true) return report.usage("--against goes with --check: it writes nothing");
  if (flags.against !== undefined && (flags.workflows ?? []).length === 0)
    return report.usage(
      "--against needs --workflows MODULE: the compiled module exporting the new @Workflow classes, whose code replays the journals",
    );
  const options: GenerateOptions = {
    project: resolvePath(io, flags.project),
    ...(flags.out === undefined ? {} : { out: resolvePath(io, flags.out) }),
    check: flags.check === true,
    acceptBreaking: flags.acceptBreaking === true,
  };
  if (flags.watch === true) return runWatch(compiler, options, io, report);
  let result: GenerateResult;
  try {
    result = await compiler.generate(options);
  } catch (e) {
    return report.error(e);
  }
  let journals: JournalCheck | undefined;
  if (flags.against !== undefined) {
    try {
      journals = await replayJournals(io, flags, flags.json === true, unreadableResults(result));
    } catch (e) {
      return report.error(e);
    }
  }
  report.result(result, undefined, journals);
  const failure = failureOf(result, journals);
  return failure === undefined ? ExitCode.Ok : FAILURE_CODES[failure];
}

/** The steps whose recorded results the new code cannot read, by workflow type: the static check's breaking type changes. */
function unreadableResults(result: GenerateResult): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const b of result.breaking) {
    if (b.kind !== "type-changed") continue;
    const steps = out.get(b.workflow) ?? new Map<string, string>();
    steps.set(b.step, b.message);
    out.set(b.workflow, steps);
  }
  return out;
}

/** The journal tier: the new code, loaded from `--workflows`, replays the journals `--against` names. */
async function replayJournals(io: Io, flags: GenFlags, json: boolean, unreadable: Map<string, Map<string, string>>): Promise<JournalCheck> {
  const { runtime, classes } = await loadWorkflows(io, flags.workflows ?? []);
  const cipher = cipherFrom(io, flags.keys);
  let progress: Progress | undefined;
  try {
    return await checkJournals(runtime, classes, resolvePath(io, flags.against as string), {
      finished: flags.finished ?? 0,
      unreadable,
      ...(cipher === undefined ? {} : { cipher }),
      onTotal: (n) => (progress = new Progress(io, "replaying journals", n, json)),
      onRun: (id) => progress?.tick(id),
    });
  } finally {
    progress?.stop();
  }
}

async function runWatch(compiler: Compiler, options: GenerateOptions, io: Io, report: Reporter): Promise<number> {
  // Listen for Ctrl-C before anything is printed, so an interrupt right after the first line is not lost.
  const interrupted = io.interrupted();
  let watcher: Watcher;
  try {
    watcher = await compiler.watch(options, {
      onResult: (result, changed) => report.result(result, changed),
      onError: (error, changed) => void report.error(error, changed),
    });
  } catch (e) {
    return report.error(e);
  }
  report.note("watching for changes; press Ctrl-C to stop");
  await interrupted;
  await watcher.close();
  return ExitCode.Ok;
}

/** Runs in flight that would fail, listed one by one up to this many; the rest are counted. */
const MAX_LISTED = 20;

/** Prints results for people (coloured on a terminal) or as JSON for machines. */
class Reporter {
  private readonly colors;

  constructor(
    private readonly io: Io,
    private readonly json: boolean,
    private readonly compiler: Compiler,
  ) {
    this.colors = paint(io.color);
  }

  result(result: GenerateResult, changed?: readonly string[], journals?: JournalCheck): void {
    if (this.json) {
      const { ir: _ir, ...rest } = result;
      const failure = failureOf(result, journals);
      this.io.stdout.write(
        `${JSON.stringify({
          ...rest,
          ...(failure === undefined ? {} : { ok: false, failure }),
          ...(journals === undefined ? {} : { journals }),
          ...(changed === undefined ? {} : { changed }),
        })}\n`,
      );
      return;
    }
    const c = this.colors;
    const out: string[] = [];
    if (changed !== undefined && changed.length > 0) out.push(c.dim(`changed: ${changed.map((p) => this.path(p)).join(", ")}`));
    const names = result.workflows.map((w) => w.type).join(", ");
    out.push(
      `${c.bold("fusee gen")}${result.check ? " --check" : ""}: ${result.workflows.length} workflow${result.workflows.length === 1 ? "" : "s"}${names === "" ? "" : ` (${names})`} in ${Math.round(result.durationMs)} ms`,
    );
    for (const f of result.files) {
      const status =
        f.status === "written"
          ? c.green("written  ")
          : f.status === "stale"
            ? c.red("stale    ")
            : c.dim(f.status === "current" ? "current  " : "unchanged");
      out.push(`  ${status} ${this.path(f.path)}`);
    }
    for (const change of result.changes) out.push(`  ${c.dim("·")} ${change}`);
    const blocking = result.breaking.filter((b) => b.kind !== "after-last-wait");
    for (const b of result.breaking) {
      const label =
        b.kind === "after-last-wait"
          ? c.yellow("finished runs only")
          : result.check
            ? c.red("breaking")
            : c.yellow("accepted breaking change");
      out.push(`  ${label}: ${b.message}`);
    }
    for (const b of result.possiblyBreaking) out.push(`  ${c.yellow("possibly breaking")}: ${b.message}`);
    if (!result.check && blocking.length > 0) out.push(c.yellow(`  ${backingOut(blocking)}`));
    if (journals !== undefined) out.push(...this.journalLines(journals));
    const failure = failureOf(result, journals);
    if (result.check && failure !== undefined) {
      const stale = result.files.some((f) => f.status === "stale");
      const reasons: string[] = [];
      if (blocking.length > 0)
        reasons.push(
          `${blocking.length} replay-breaking change${blocking.length === 1 ? "" : "s"} (guard ${blocking.length === 1 ? "it" : "them"} as each message says; or, once \`npx fusee gen --check --against <data dir>\` finds no run in flight that would fail, run \`npx fusee gen --accept-breaking\`)`,
        );
      const failingInFlight = inFlightFailures(journals);
      if (failingInFlight > 0) reasons.push(`${failingInFlight} run${failingInFlight === 1 ? "" : "s"} in flight would fail`);
      // Regenerating refuses while a breaking change is unguarded, so it is advised only when it would work.
      if (stale) reasons.push(blocking.length > 0 ? "generated files are stale" : "generated files are stale (run `npx fusee gen`)");
      if (result.possiblyBreaking.length > 0)
        reasons.push(
          `${result.possiblyBreaking.length} possibly breaking change${result.possiblyBreaking.length === 1 ? "" : "s"} (runs in flight on the paths named break)`,
        );
      const text = `check failed: ${reasons.join("; ")}`;
      out.push(failure === "possibly-breaking" ? c.yellow(text) : c.red(text));
    }
    this.io.stdout.write(`${out.join("\n")}\n`);
  }

  private journalLines(j: JournalCheck): string[] {
    const c = this.colors;
    const out: string[] = [];
    for (const run of j.failing.slice(0, MAX_LISTED)) {
      const who = run.workflowId === "" ? "a journal" : `${run.workflowId} (${run.type} run ${run.runId}, ${run.status})`;
      out.push(`  ${run.finished ? c.yellow("finished run would not replay") : c.red("would fail")}: ${who}: ${run.error}`);
    }
    if (j.failing.length > MAX_LISTED)
      out.push(`  ${c.red("would fail")}: ${j.failing.length - MAX_LISTED} more runs (--json lists them all)`);
    const finished = j.finished === 0 ? "" : ` and ${j.finished} finished run${j.finished === 1 ? "" : "s"}`;
    const failing = inFlightFailures(j);
    const notReplaying = j.failing.length - failing;
    const outcome =
      j.failing.length === 0
        ? "all replay"
        : [failing > 0 ? `${failing} in flight would fail` : "", notReplaying > 0 ? `${notReplaying} finished would not replay` : ""]
            .filter((x) => x !== "")
            .join(", ");
    const summary = `journals of ${this.path(j.source)}: ${j.inFlight} run${j.inFlight === 1 ? "" : "s"} in flight${finished} replayed with the new code in ${Math.round(j.durationMs)} ms: ${outcome}`;
    out.push(`  ${failing === 0 ? (notReplaying === 0 ? c.green(summary) : c.yellow(summary)) : c.red(summary)}`);
    return out;
  }

  note(message: string): void {
    if (!this.json) this.io.stdout.write(`${this.colors.dim(message)}\n`);
  }

  usage(message: string): number {
    if (this.json) this.io.stdout.write(`${JSON.stringify({ ok: false, error: { code: "FUSEE_USAGE", message } })}\n`);
    else this.io.stderr.write(`${this.colors.red(`fusee gen: ${message}`)}\n`);
    return ExitCode.Usage;
  }

  /** Prints an error and returns the exit code it stands for. */
  error(error: unknown, changed?: readonly string[]): number {
    const { BreakingChangeError, GenError, SourceError } = this.compiler;
    if (error instanceof UsageError) return this.usage(error.message);
    const code = exitCodeOf(error, this.compiler);
    if (this.json) {
      const body =
        error instanceof GenError
          ? {
              code: error.code,
              message: error.message,
              ...(error instanceof SourceError ? { problems: error.problems } : {}),
              ...(error instanceof BreakingChangeError ? { breaking: error.changes } : {}),
            }
          : {
              code: (error as { code?: unknown })?.code ?? "FUSEE_INTERNAL",
              message: error instanceof Error ? error.message : String(error),
            };
      const failure = code === ExitCode.Breaking ? "breaking" : code === ExitCode.Source ? "source" : undefined;
      this.io.stdout.write(
        `${JSON.stringify({ ok: false, ...(failure === undefined ? {} : { failure }), error: body, ...(changed === undefined ? {} : { changed }) })}\n`,
      );
      return code;
    }
    const c = this.colors;
    const lines: string[] = [];
    if (error instanceof BreakingChangeError) {
      lines.push(
        c.red(
          `fusee gen: refused to record ${error.changes.length} replay-breaking change${error.changes.length === 1 ? "" : "s"}; nothing was written.`,
        ),
      );
      for (const change of error.changes) lines.push(`  ${change.message}`);
    } else if (error instanceof SourceError) {
      lines.push(
        c.red(
          `fusee gen: ${error.problems.length} problem${error.problems.length === 1 ? "" : "s"} in workflow source; nothing was written.`,
        ),
      );
      for (const p of error.problems) lines.push(`  ${p.at.file}:${p.at.line}: ${p.message} ${c.dim(`[${p.code}]`)}`);
    } else if (error instanceof GenError) {
      lines.push(`${c.red(`fusee gen: ${error.message}`)} ${c.dim(`[${error.code}]`)}`);
    } else if (code === ExitCode.Failed) {
      lines.push(c.red(`fusee gen: ${error instanceof Error ? error.message : String(error)}`));
    } else {
      lines.push(c.red(`fusee gen: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
    }
    this.io.stderr.write(`${lines.join("\n")}\n`);
    return code;
  }

  private path(p: string): string {
    const r = relative(this.io.cwd, p);
    return r.startsWith("..") ? p : r;
  }
}

function exitCodeOf(error: unknown, { BreakingChangeError, GenConfigError, GenError, LockFileError, SourceError }: Compiler): number {
  if (error instanceof GenConfigError || error instanceof LockFileError) return ExitCode.Usage;
  if (error instanceof BreakingChangeError) return ExitCode.Breaking;
  if (error instanceof SourceError) return ExitCode.Source;
  if (error instanceof GenError) return ExitCode.Failed;
  // A data directory or export the journal tier cannot read (damaged, encrypted without keys) is a failed check.
  const code = (error as { code?: unknown } | undefined)?.code;
  if (error instanceof Error && typeof code === "string" && code.startsWith("FUSEE_")) return ExitCode.Failed;
  return ExitCode.Internal;
}

/**
 * Why a `--check` failed: a breaking change, or a run in flight that would fail, outranks the rest;
 * a possibly breaking change outranks the stale lock it always comes with (regenerating records
 * the change, it does not make it safe), so CI can fail on one and warn on the other.
 */
function failureOf(result: GenerateResult, journals?: JournalCheck): Failure | undefined {
  if (!result.check) return undefined;
  if (result.breaking.some((b) => b.kind !== "after-last-wait") || inFlightFailures(journals) > 0) return "breaking";
  if (result.possiblyBreaking.length > 0) return "possibly-breaking";
  if (result.files.some((f) => f.status === "stale")) return "stale";
  return undefined;
}

/** Runs in flight that would fail; a finished run whose replay fails is reported but fails no check, as a change after the last wait does not. */
function inFlightFailures(journals: JournalCheck | undefined): number {
  return journals?.failing.filter((r) => !r.finished).length ?? 0;
}

function resolvePath(io: Io, path: string): string {
  return resolve(io.cwd, path);
}

/**
 * What happens to runs already in flight when a breaking change is recorded, and how to undo it:
 * they stop rather than fail, so putting back the code they were written under lets them go on.
 */
function backingOut(accepted: readonly BreakingChange[]): string {
  const workflows = [...new Set(accepted.map((b) => b.workflow))].join(", ");
  return (
    `Runs of ${workflows} already in flight stop (FUSEE_NON_DETERMINISM; \`npx fusee list --data <dir> --status stopped\` finds them). ` +
    "To back out, deploy the previous code with its fusee.lock.json: stopped runs go on where they stopped. " +
    "To keep the change, terminate or reset them."
  );
}
