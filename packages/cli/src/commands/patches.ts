import type { Command } from "commander";
import { dataDirOptions, instant, openDataDir, reportError, table, toJson, type DataDirFlags } from "../data-dir.js";
import { ExitCode } from "../exit-codes.js";
import { type Io, paint } from "../io.js";
import { patchReport, type PatchNeed, type TypePatches } from "../patch-report.js";
import type { CommandContext } from "./command-context.js";

const NEEDS: Record<PatchNeed, string> = {
  "patched-and-old-path": "ctx.patched() and the old path",
  "deprecate-patch": "ctx.deprecatePatch() only",
  nothing: "nothing: remove the call",
};

/** `fusee patches`: which `ctx.patched()` calls and old code paths the live runs of a data directory still need. */
export function patchesCommand(program: Command, context: CommandContext): void {
  dataDirOptions(
    program
      .command("patches")
      .description("Show which patches the unfinished runs of a data directory still need (works while an engine runs on it)."),
  )
    .option("--json", "print the report as one JSON document")
    .addHelpText(
      "after",
      `
For each workflow type and each patch ID some run of it recorded (the first time ctx.patched(id)
took the new path on a run, a patch record is written to its journal):
  LIVE WITH IT       unfinished runs holding the record. They replay ctx.patched(id) as true and
                     consume the record: keep the call, at least as ctx.deprecatePatch(id).
  LIVE MAYBE OLD     unfinished runs without the record that started before it was first written.
                     They may have passed that point on older code and then replay the old path:
                     keep if (ctx.patched(id)) with both branches.
  FINISHED WITH IT   finished runs holding the record; the engine does not replay them.
  STILL NEEDED       what the code must keep; "nothing" once both live counts are 0.
Only latest runs in the directory count; a patch no run recorded is not listed. If finished runs were
removed, the first record may look later than it was, which only makes LIVE MAYBE OLD larger.`,
    )
    .action(async (flags: DataDirFlags) => {
      context.exitCode = await runPatches(flags, context.io);
    });
}

async function runPatches(flags: DataDirFlags, io: Io): Promise<number> {
  const json = flags.json === true;
  try {
    const reader = await openDataDir(io, flags, "patches");
    let types: TypePatches[];
    try {
      types = patchReport(reader);
    } finally {
      await reader.close();
    }
    if (json) {
      io.stdout.write(`${toJson({ ok: true, dir: reader.dir, types, recovery: reader.recoveryEvents() })}\n`);
      return ExitCode.Ok;
    }
    io.stdout.write(`${render(types, io)}\n`);
    return ExitCode.Ok;
  } catch (e) {
    return reportError(io, "patches", e, json);
  }
}

function render(types: readonly TypePatches[], io: Io): string {
  const c = paint(io.color);
  if (types.length === 0) return c.dim("no runs");
  const runs = [["TYPE", "LIVE", "FINISHED", "OLDEST LIVE STARTED"]];
  for (const t of types) runs.push([t.type, String(t.live), String(t.finished), instant(t.oldestLiveStartedAt)]);
  const rows = [["TYPE", "PATCH", "LIVE WITH IT", "LIVE MAYBE OLD", "FINISHED WITH IT", "FIRST RECORDED", "STILL NEEDED"]];
  for (const t of types) {
    for (const p of t.patches) {
      rows.push([
        t.type,
        p.id,
        String(p.liveWithPatch),
        String(p.liveMaybeOldPath),
        String(p.finishedWithPatch),
        instant(p.firstRecordedAt),
        NEEDS[p.need],
      ]);
    }
  }
  const patches = rows.length === 1 ? c.dim("no run recorded a patch") : table(rows);
  return `${table(runs)}\n\n${patches}`;
}
