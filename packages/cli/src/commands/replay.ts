import { readdirSync, statSync } from "node:fs";
import { basename, relative, resolve } from "node:path";
import type { ReplayResult } from "@fusee/runtime";
import type { Command } from "commander";
import { reportError, toJson, UsageError } from "../data-dir.js";
import { ExitCode } from "../exit-codes.js";
import { type Io, paint } from "../io.js";
import { Progress } from "../progress.js";
import { loadWorkflows, type Runtime } from "../workflow-modules.js";
import type { CommandContext } from "./command-context.js";

interface ReplayFlags {
  workflows: string[];
  json?: boolean;
}

/** `fusee replay`: checks workflow code against exported journals. */
export function replayCommand(program: Command, context: CommandContext): void {
  program
    .command("replay")
    .description("Replay exported journals through the current workflow code and report the first difference of each.")
    .argument("<paths...>", "export files, or folders of them (*.json)")
    .requiredOption(
      "-w, --workflows <module>",
      "compiled module exporting the @Workflow classes (repeat for more modules)",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option("--json", "print the results as JSON")
    .addHelpText(
      "after",
      `
The module is imported (so it must not start anything when loaded) and every exported @Workflow class
is registered. A replay runs no step and touches no storage: results come from the journal.

Exit codes: 0 every journal replays; 1 a journal differs from the code or cannot be read;
2 usage error (no module, no workflows, no export files).`,
    )
    .action(async (paths: string[], flags: ReplayFlags) => {
      context.exitCode = await runReplay(paths, flags, context.io);
    });
}

async function runReplay(paths: readonly string[], flags: ReplayFlags, io: Io): Promise<number> {
  const json = flags.json === true;
  try {
    const { runtime, classes } = await loadWorkflows(io, flags.workflows);
    const replayer = new runtime.Replayer().register(...classes);
    const files = exportFiles(io, paths, runtime.EXPORT_FILE_SUFFIX);
    const results: ReplayResult[] = [];
    const progress = new Progress(io, "replaying", files.length, json);
    try {
      for (const file of files) {
        results.push(await replayOne(replayer, file));
        progress.tick(basename(file));
      }
    } finally {
      progress.stop();
    }
    const different = results.filter((r) => !r.ok).length;
    if (json) {
      const plain = results.map(({ cause: _cause, ...rest }) => rest);
      io.stdout.write(`${toJson({ ok: different === 0, replayed: results.length, different, results: plain })}\n`);
    } else {
      io.stdout.write(render(io, results, classes.length));
    }
    return different === 0 ? ExitCode.Ok : ExitCode.Failed;
  } catch (e) {
    return reportError(io, "replay", e, json);
  }
}

async function replayOne(replayer: InstanceType<Runtime["Replayer"]>, file: string): Promise<ReplayResult> {
  try {
    return await replayer.replayFile(file);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return { workflowId: "", type: "", runId: 0, file, ok: false, finished: false, error: message, next: [], waiting: [], records: 0 };
  }
}

/** The export files named by the arguments, folders expanded to their files in name order. */
function exportFiles(io: Io, paths: readonly string[], suffix: string): string[] {
  const files: string[] = [];
  for (const p of paths) {
    const path = resolve(io.cwd, p);
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (e) {
      throw new UsageError(`cannot read ${path}: ${(e as Error).message}`);
    }
    if (!isDir) {
      files.push(path);
      continue;
    }
    const names = readdirSync(path)
      .filter((n) => n.endsWith(suffix))
      .sort();
    if (names.length === 0) throw new UsageError(`the folder ${path} holds no export files (*${suffix})`);
    files.push(...names.map((n) => resolve(path, n)));
  }
  return files;
}

function render(io: Io, results: readonly ReplayResult[], workflows: number): string {
  const c = paint(io.color);
  const lines: string[] = [];
  for (const r of results) {
    const file = r.file === undefined ? "" : relative(io.cwd, r.file).startsWith("..") ? r.file : relative(io.cwd, r.file);
    const who = r.workflowId === "" ? "" : `  ${r.workflowId} (${r.type} run ${r.runId})`;
    if (r.ok) {
      const state = r.finished
        ? "finished"
        : r.next.length > 0
          ? `not finished; next: ${r.next.join(", ")}`
          : "waiting at the end of its journal";
      lines.push(`${c.green("✔")} ${file}${who}  ${c.dim(state)}`);
    } else {
      lines.push(`${c.red("✘")} ${file}${who}`);
      lines.push(`    ${c.red(r.error ?? "the replay failed")}`);
    }
  }
  const ok = results.filter((r) => r.ok);
  const finished = ok.filter((r) => r.finished).length;
  const different = results.length - ok.length;
  const summary =
    `${results.length} journal${results.length === 1 ? "" : "s"} replayed against ${workflows} workflow${workflows === 1 ? "" : "s"}: ` +
    `${ok.length} ok (${finished} finished, ${ok.length - finished} not finished), ${different} different`;
  lines.push(different === 0 ? c.green(summary) : c.red(summary));
  return `${lines.join("\n")}\n`;
}
