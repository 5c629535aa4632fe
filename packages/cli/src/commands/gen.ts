import { relative, resolve } from "node:path";
import type { GenerateOptions, GenerateResult, Watcher } from "@fusee/compiler";
import { type Command, Option } from "commander";
import { ExitCode } from "../exit-codes.js";
import { type Io, paint } from "../io.js";
import type { CommandContext } from "./index.js";

interface GenFlags {
  project: string;
  out?: string;
  check?: boolean;
  watch?: boolean;
  acceptBreaking?: boolean;
  json?: boolean;
}

/** `fusee gen`: typed clients, the worker type table and fusee.lock.json from the project's workflows. */
export function genCommand(program: Command, context: CommandContext): void {
  program
    .command("gen")
    .description("Generate typed workflow clients, the worker type table and fusee.lock.json from the project's @Workflow classes.")
    .option("-p, --project <dir>", "project folder holding tsconfig.json, or a tsconfig file", ".")
    .option("-o, --out <file>", 'client file to write (default: "out" in fusee.config.json, else src/fusee.generated.ts)')
    .addOption(new Option("--check", "write nothing; exit 4 when a generated file or the lock is stale, 5 when a change breaks replay").conflicts("watch"))
    .option("-w, --watch", "regenerate whenever a source file changes, until interrupted")
    .option("--accept-breaking", "record replay-breaking changes; only when no runs of the workflows concerned are in flight")
    .option("--json", "print results as JSON (one object per generation with --watch)")
    .addHelpText(
      "after",
      `
A change that runs recorded in fusee.lock.json could not replay (a step inserted, removed, renamed or
reordered, a step type changed incompatibly) must be guarded by if (ctx.patched("id")) { ... } with
the ID declared in @Workflow({ patches: ["id"] }); gen refuses to record it otherwise.

A change after the last point where a run can wait reaches finished runs only: it is reported
("finished runs only") and does not fail the check.

Exit codes: 0 ok; 2 usage or configuration error; 3 internal error; 4 generated files are stale
(--check); 5 a replay-breaking change; 6 a problem in workflow source. With --json, "failure" says
the same: "stale", "breaking" or "source".`,
    )
    .action(async (flags: GenFlags) => {
      context.exitCode = await runGen(flags, context.io);
    });
}

/** The compiler, loaded by `gen` alone: it brings TypeScript, which no other command needs. */
type Compiler = typeof import("@fusee/compiler");

async function runGen(flags: GenFlags, io: Io): Promise<number> {
  const compiler = await import("@fusee/compiler");
  const options: GenerateOptions = {
    project: resolvePath(io, flags.project),
    ...(flags.out === undefined ? {} : { out: resolvePath(io, flags.out) }),
    check: flags.check === true,
    acceptBreaking: flags.acceptBreaking === true,
  };
  const report = new Reporter(io, flags.json === true, compiler);
  if (flags.watch === true) return runWatch(compiler, options, io, report);
  try {
    const result = await compiler.generate(options);
    report.result(result);
    return exitCodeOfResult(result);
  } catch (e) {
    return report.error(e);
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

  result(result: GenerateResult, changed?: readonly string[]): void {
    if (this.json) {
      const { ir: _ir, ...rest } = result;
      const failure = failureOf(result);
      this.io.stdout.write(`${JSON.stringify({ ...rest, ...(failure === undefined ? {} : { failure }), ...(changed === undefined ? {} : { changed }) })}\n`);
      return;
    }
    const c = this.colors;
    const out: string[] = [];
    if (changed !== undefined && changed.length > 0) out.push(c.dim(`changed: ${changed.map((p) => this.path(p)).join(", ")}`));
    const names = result.workflows.map((w) => w.type).join(", ");
    out.push(`${c.bold("fusee gen")}${result.check ? " --check" : ""}: ${result.workflows.length} workflow${result.workflows.length === 1 ? "" : "s"}${names === "" ? "" : ` (${names})`} in ${Math.round(result.durationMs)} ms`);
    for (const f of result.files) {
      const status =
        f.status === "written" ? c.green("written  ") : f.status === "stale" ? c.red("stale    ") : c.dim(f.status === "current" ? "current  " : "unchanged");
      out.push(`  ${status} ${this.path(f.path)}`);
    }
    for (const change of result.changes) out.push(`  ${c.dim("·")} ${change}`);
    const blocking = result.breaking.filter((b) => b.kind !== "after-last-wait");
    for (const b of result.breaking) {
      const label = b.kind === "after-last-wait" ? c.yellow("finished runs only") : result.check ? c.red("breaking") : c.yellow("accepted breaking change");
      out.push(`  ${label}: ${b.message}`);
    }
    if (result.check && !result.ok) {
      const stale = result.files.some((f) => f.status === "stale");
      const reasons: string[] = [];
      if (blocking.length > 0) reasons.push(`${blocking.length} replay-breaking change${blocking.length === 1 ? "" : "s"} (guard ${blocking.length === 1 ? "it" : "them"} as each message says, or run \`npx fusee gen --accept-breaking\` when no runs are in flight)`);
      // Regenerating refuses while a breaking change is unguarded, so it is advised only when it would work.
      if (stale) reasons.push(blocking.length > 0 ? "generated files are stale" : "generated files are stale (run `npx fusee gen`)");
      out.push(c.red(`check failed: ${reasons.join("; ")}`));
    }
    this.io.stdout.write(`${out.join("\n")}\n`);
  }

  note(message: string): void {
    if (!this.json) this.io.stdout.write(`${this.colors.dim(message)}\n`);
  }

  /** Prints an error and returns the exit code it stands for. */
  error(error: unknown, changed?: readonly string[]): number {
    const { BreakingChangeError, GenError, SourceError } = this.compiler;
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
          : { code: "FUSEE_INTERNAL", message: error instanceof Error ? error.message : String(error) };
      const failure = code === ExitCode.Breaking ? "breaking" : code === ExitCode.Source ? "source" : undefined;
      this.io.stdout.write(`${JSON.stringify({ ok: false, ...(failure === undefined ? {} : { failure }), error: body, ...(changed === undefined ? {} : { changed }) })}\n`);
      return code;
    }
    const c = this.colors;
    const lines: string[] = [];
    if (error instanceof BreakingChangeError) {
      lines.push(c.red(`fusee gen: refused to record ${error.changes.length} replay-breaking change${error.changes.length === 1 ? "" : "s"}; nothing was written.`));
      for (const change of error.changes) lines.push(`  ${change.message}`);
    } else if (error instanceof SourceError) {
      lines.push(c.red(`fusee gen: ${error.problems.length} problem${error.problems.length === 1 ? "" : "s"} in workflow source; nothing was written.`));
      for (const p of error.problems) lines.push(`  ${p.at.file}:${p.at.line}: ${p.message} ${c.dim(`[${p.code}]`)}`);
    } else if (error instanceof GenError) {
      lines.push(`${c.red(`fusee gen: ${error.message}`)} ${c.dim(`[${error.code}]`)}`);
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
  return ExitCode.Internal;
}

/** Why a `--check` failed: a breaking change outranks stale files, which regenerating would not fix. */
function failureOf(result: GenerateResult): "breaking" | "stale" | undefined {
  if (result.ok) return undefined;
  if (result.breaking.some((b) => b.kind !== "after-last-wait")) return "breaking";
  return "stale";
}

function exitCodeOfResult(result: GenerateResult): number {
  const failure = failureOf(result);
  return failure === "breaking" ? ExitCode.Breaking : failure === "stale" ? ExitCode.Stale : ExitCode.Ok;
}

function resolvePath(io: Io, path: string): string {
  return resolve(io.cwd, path);
}
