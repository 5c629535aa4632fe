import { RUN_STATUSES, type ListFilter } from "@fusee/runtime";
import { type Command, Option } from "commander";
import {
  clip,
  dataDirOptions,
  instant,
  openDataDir,
  parseLimit,
  reportError,
  table,
  toJson,
  UsageError,
  type DataDirFlags,
} from "../data-dir.js";
import { ExitCode } from "../exit-codes.js";
import { type Io, paint } from "../io.js";
import type { CommandContext } from "./command-context.js";

interface ListFlags extends DataDirFlags {
  where?: string;
  status?: string;
  limit: string;
}

/** `fusee list`: the runs of a data directory, newest first, filtered like `engine.listWhere`. */
export function listCommand(program: Command, context: CommandContext): void {
  dataDirOptions(
    program
      .command("list")
      .description("List the runs of a data directory, most recently started first (works while an engine runs on it)."),
  )
    .option("-w, --where <json>", 'a listWhere filter as JSON, e.g. \'{"status":"failed","amount":{"gte":100}}\'')
    .addOption(
      new Option("-s, --status <status>", "only runs with this status (the directory's reader shows a waiting run as running)").choices(
        RUN_STATUSES,
      ),
    )
    .option("-n, --limit <n>", "show at most this many runs", "100")
    .option("--json", "print the runs as a JSON array")
    .action(async (flags: ListFlags) => {
      context.exitCode = await runList(flags, context.io);
    });
}

async function runList(flags: ListFlags, io: Io): Promise<number> {
  const json = flags.json === true;
  try {
    const filter = withStatus(parseFilter(flags.where), flags.status);
    const limit = parseLimit(flags.limit);
    const reader = await openDataDir(io, flags, "list");
    try {
      const runs = reader.list(filter, limit);
      if (json) {
        io.stdout.write(`${toJson(runs)}\n`);
        return ExitCode.Ok;
      }
      const c = paint(io.color);
      if (runs.length === 0) {
        io.stdout.write(`${c.dim("no runs")}\n`);
        return ExitCode.Ok;
      }
      const rows = [["ID", "TYPE", "RUN", "STATUS", "STARTED", "ENDED", "ATTRIBUTES"]];
      for (const r of runs) {
        const attributes =
          r.attributesError !== undefined
            ? "(unreadable: pass --keys?)"
            : Object.keys(r.attributes).length === 0
              ? ""
              : clip(toJson(r.attributes), 60);
        rows.push([r.id, r.type, String(r.runId), r.status, instant(r.startedAt), instant(r.endedAt), attributes]);
      }
      io.stdout.write(`${table(rows)}\n`);
      return ExitCode.Ok;
    } finally {
      await reader.close();
    }
  } catch (e) {
    return reportError(io, "list", e, json);
  }
}

function parseFilter(where: string | undefined): ListFilter {
  if (where === undefined) return {};
  let filter: unknown;
  try {
    filter = JSON.parse(where);
  } catch (e) {
    throw new UsageError(`--where must be JSON, such as '{"status":"failed"}': ${(e as Error).message}`);
  }
  if (filter === null || typeof filter !== "object" || Array.isArray(filter)) {
    throw new UsageError(`--where must be a JSON object of field names to values or operators; got ${where}`);
  }
  return filter as ListFilter;
}

function withStatus(filter: ListFilter, status: string | undefined): ListFilter {
  if (status === undefined) return filter;
  if ("status" in filter) throw new UsageError("give the status once: with --status or in --where, not both");
  return { ...filter, status };
}
