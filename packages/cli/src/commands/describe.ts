import type { Command } from "commander";
import { dataDirOptions, instant, openDataDir, reportError, table, toJson, type DataDirFlags } from "../data-dir.js";
import { ExitCode } from "../exit-codes.js";
import { recordFields, recordPayload } from "../record-text.js";
import { type Io, paint } from "../io.js";
import type { CommandContext } from "./command-context.js";

/** `fusee describe ID`: a run's status and its journal, record by record. */
export function describeCommand(program: Command, context: CommandContext): void {
  dataDirOptions(
    program
      .command("describe")
      .description("Show a run's status and journal, read from a data directory (works while an engine runs on it).")
      .argument("<id>", "the workflow ID"),
  )
    .option("--json", "print the run and its journal (in the export format) as JSON")
    .action(async (id: string, flags: DataDirFlags) => {
      context.exitCode = await runDescribe(id, flags, context.io);
    });
}

async function runDescribe(id: string, flags: DataDirFlags, io: Io): Promise<number> {
  const json = flags.json === true;
  try {
    const reader = await openDataDir(io, flags, "describe");
    try {
      const run = reader.status(id);
      const journal = run === undefined ? undefined : await reader.export(id);
      if (run === undefined || journal === undefined) {
        const message = `no run has the workflow ID '${id}' in ${reader.dir}`;
        if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: { code: "FUSEE_NOT_FOUND", message } })}\n`);
        else io.stderr.write(`${paint(io.color).red(`fusee describe: ${message}`)}\n`);
        return ExitCode.Failed;
      }
      if (json) {
        io.stdout.write(`${toJson({ ...run, records: journal.records, recovery: reader.recoveryEvents() }, 2)}\n`);
        return ExitCode.Ok;
      }
      const c = paint(io.color);
      const lines = [
        `${c.bold(run.id)}  ${run.type} run ${run.runId}  ${run.status}`,
        `started ${instant(run.startedAt)}${run.endedAt === undefined ? "" : `, ended ${instant(run.endedAt)}`}, ${run.records} records`,
      ];
      if (Object.keys(run.attributes).length > 0) lines.push(`attributes ${toJson(run.attributes)}`);
      if (run.attributesError !== undefined) lines.push(c.yellow(`attributes unreadable: ${run.attributesError}`));
      lines.push("");
      const rows = [["#", "AT", "KIND", "FIELDS", "PAYLOAD"]];
      journal.records.forEach((record, position) =>
        rows.push([String(position), instant(record.at), record.kind, recordFields(record), recordPayload(record, 80)]),
      );
      lines.push(table(rows));
      io.stdout.write(`${lines.join("\n")}\n`);
      return ExitCode.Ok;
    } finally {
      await reader.close();
    }
  } catch (e) {
    return reportError(io, "describe", e, json);
  }
}
