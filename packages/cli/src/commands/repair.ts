import { resolve } from "node:path";
import { repairDataDir, type EngineEvent } from "@fusee/runtime";
import type { Command } from "commander";
import { reportError, toJson } from "../data-dir.js";
import { ExitCode } from "../exit-codes.js";
import { type Io, paint } from "../io.js";
import type { CommandContext } from "./command-context.js";

interface RepairFlags {
  data: string;
  json?: boolean;
}

/** `fusee repair`: cuts the damaged shards of a data directory so an engine can open it again. */
export function repairCommand(program: Command, context: CommandContext): void {
  program
    .command("repair")
    .description(
      "Cut each damaged shard of a data directory at its first corruption so an engine opens it again (no engine may run on it).",
    )
    .requiredOption("-d, --data <dir>", "the data directory (opened for writing: stop its engine first)")
    .option("--json", "print what was cut as JSON")
    .addHelpText(
      "after",
      `
An engine refuses a data directory whose synced data is damaged (a flipped byte, a lost or
truncated segment) and names shard, segment and offset. repair cuts each such shard at the start of
its first damaged batch, discarding that batch and everything after it in the shard (the runs that
lose records there go back to an earlier state or vanish), and cuts writes torn by a crash, as any
engine open does. It prints every cut with its shard, segment, offset and the bytes discarded, and
exits 0; "nothing needed cutting" when the directory was intact. Keep a copy of the directory
first. Config.local(dir).repair() does the same when an engine opens. A directory written by an
older fusee is moved to the current format, which is said on standard error.`,
    )
    .action(async (flags: RepairFlags) => {
      context.exitCode = await runRepair(flags, context.io);
    });
}

async function runRepair(flags: RepairFlags, io: Io): Promise<number> {
  const json = flags.json === true;
  const dir = resolve(io.cwd, flags.data);
  try {
    const events = await repairDataDir(dir);
    for (const e of events) {
      if (e.kind === "format-migrated") io.stderr.write(`fusee repair: moved ${e.dir} from format ${e.from} to format ${e.to}\n`);
    }
    const cuts = events.filter((e) => e.kind === "recovery-cut");
    if (json) {
      const moved = events.find((e) => e.kind === "format-migrated");
      io.stdout.write(`${toJson({ ok: true, dir, cuts, migrated: moved === undefined ? null : { from: moved.from, to: moved.to } })}\n`);
      return ExitCode.Ok;
    }
    if (cuts.length === 0) {
      io.stdout.write(`fusee repair: nothing needed cutting in ${dir}\n`);
      return ExitCode.Ok;
    }
    const c = paint(io.color);
    for (const cut of cuts) io.stdout.write(`${c.yellow(`fusee repair: ${cutText(cut)}`)}\n`);
    return ExitCode.Ok;
  } catch (e) {
    return reportError(io, "repair", e, json);
  }
}

function cutText(cut: Extract<EngineEvent, { kind: "recovery-cut" }>): string {
  return `cut shard ${cut.shard} at offset ${cut.offset} of segment ${cut.segment}, discarding ${cut.discardedBytes} bytes: ${cut.reason}`;
}
