import { join, relative, resolve } from "node:path";
import { exportFileName, writeExport } from "@fusee/runtime";
import type { Command } from "commander";
import { dataDirOptions, openDataDir, parseLimit, reportError, toJson, type DataDirFlags } from "../data-dir.js";
import { ExitCode } from "../exit-codes.js";
import { type Io, paint } from "../io.js";
import { Progress } from "../progress.js";
import type { CommandContext } from "./command-context.js";

interface ExportFlags extends DataDirFlags {
  id?: string;
  out: string;
  limit: string;
}

/** `fusee export`: journals of a data directory as export files, for `fusee replay` and regression tests. */
export function exportCommand(program: Command, context: CommandContext): void {
  dataDirOptions(
    program
      .command("export")
      .description("Write the journals of a data directory's runs as export files (works while an engine runs on it)."),
  )
    .option("--id <id>", "export only the run of this workflow ID")
    .requiredOption("-o, --out <dir>", "folder to write the export files to (created when missing)")
    .option("-n, --limit <n>", "export at most this many runs, most recently started first", "1000")
    .option("--json", "print the files written as JSON")
    .addHelpText(
      "after",
      `
Each run becomes <out>/<workflow ID>.json (unsafe characters escaped), in the format of
docs/export-format.md of @fusee/runtime. Payloads are written decrypted: pass --keys for an
encrypted directory, and keep the files as private as the data.`,
    )
    .action(async (flags: ExportFlags) => {
      context.exitCode = await runExport(flags, context.io);
    });
}

async function runExport(flags: ExportFlags, io: Io): Promise<number> {
  const json = flags.json === true;
  try {
    const limit = parseLimit(flags.limit);
    const out = resolve(io.cwd, flags.out);
    const reader = await openDataDir(io, flags, "export");
    const recovery = reader.recoveryEvents();
    const written: Array<{ id: string; file: string; records: number }> = [];
    try {
      const ids = flags.id !== undefined ? [flags.id] : reader.list({}, limit).map((r) => r.id);
      const progress = new Progress(io, "exporting", ids.length, json);
      try {
        for (const id of ids) {
          const journal = await reader.export(id);
          if (journal === undefined) {
            const message = `no run has the workflow ID '${id}' in ${reader.dir}`;
            if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: { code: "FUSEE_NOT_FOUND", message } })}\n`);
            else io.stderr.write(`${paint(io.color).red(`fusee export: ${message}`)}\n`);
            return ExitCode.Failed;
          }
          const file = join(out, exportFileName(id));
          writeExport(file, journal);
          written.push({ id, file, records: journal.records.length });
          progress.tick(id);
        }
      } finally {
        progress.stop();
      }
    } finally {
      await reader.close();
    }
    if (json) {
      io.stdout.write(`${toJson({ ok: true, out, files: written, recovery })}\n`);
    } else {
      const shown = relative(io.cwd, out) || ".";
      io.stdout.write(`exported ${written.length} journal${written.length === 1 ? "" : "s"} to ${shown.startsWith("..") ? out : shown}\n`);
    }
    return ExitCode.Ok;
  } catch (e) {
    return reportError(io, "export", e, json);
  }
}
