import type { ScheduleDescription } from "@fusee/runtime";
import type { Command } from "commander";
import { dataDirOptions, instant, openDataDir, reportError, table, toJson, type DataDirFlags } from "../data-dir.js";
import { ExitCode } from "../exit-codes.js";
import { type Io, paint } from "../io.js";
import type { CommandContext } from "./command-context.js";

/** `fusee schedules`: the schedules of a data directory, by name, with their specs and next instants. */
export function schedulesCommand(program: Command, context: CommandContext): void {
  dataDirOptions(
    program
      .command("schedules")
      .description("List the schedules of a data directory: spec, state, counts and next instant (works while an engine runs on it)."),
  )
    .option("--json", "print the schedules as a JSON array")
    .action(async (flags: DataDirFlags) => {
      context.exitCode = await runSchedules(flags, context.io);
    });
}

async function runSchedules(flags: DataDirFlags, io: Io): Promise<number> {
  const json = flags.json === true;
  try {
    const reader = await openDataDir(io, flags, "schedules");
    try {
      const schedules = reader.schedules();
      if (json) {
        io.stdout.write(`${toJson(schedules)}\n`);
        return ExitCode.Ok;
      }
      if (schedules.length === 0) {
        io.stdout.write(`${paint(io.color).dim("no schedules")}\n`);
        return ExitCode.Ok;
      }
      const rows = [["NAME", "WORKFLOW", "WHEN", "OVERLAP", "STATE", "STARTED", "SKIPPED", "NEXT"]];
      for (const s of schedules) {
        rows.push([
          s.name,
          s.workflow,
          when(s),
          s.overlap,
          s.paused ? "paused" : "active",
          String(s.started),
          String(s.skipped),
          instant(s.nextTimes[0]),
        ]);
      }
      io.stdout.write(`${table(rows)}\n`);
      return ExitCode.Ok;
    } finally {
      await reader.close();
    }
  } catch (e) {
    return reportError(io, "schedules", e, json);
  }
}

function when(s: ScheduleDescription): string {
  if (s.cron !== undefined) return `cron ${s.cron}${s.timezone !== undefined ? ` (${s.timezone})` : ""}`;
  return s.every !== undefined ? `every ${s.every}ms` : "";
}
