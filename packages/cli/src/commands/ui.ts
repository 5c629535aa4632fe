import { resolve } from "node:path";
import { DataDirReader, type DataDirOptions } from "@fusee/runtime";
import type { Command } from "commander";
import { cipherFrom, dataDirOptions, openDataDir, reportError, UsageError, type DataDirFlags } from "../data-dir.js";
import { ExitCode } from "../exit-codes.js";
import { type Io, paint } from "../io.js";
import { startUiServer, type UiServer } from "../ui/server.js";
import type { CommandContext } from "./index.js";

interface UiFlags extends DataDirFlags {
  port: string;
}

/** `fusee ui`: a local, read-only web page of a data directory's runs, journals and schedules. */
export function uiCommand(program: Command, context: CommandContext): void {
  dataDirOptions(
    program
      .command("ui")
      .description("Serve a read-only web page of a data directory's runs, journals and schedules on 127.0.0.1 (works while an engine runs on it)."),
  )
    .option("-p, --port <n>", "the port to listen on; 0 picks a free one", "0")
    .action(async (flags: UiFlags) => {
      context.exitCode = await runUi(flags, context.io);
    });
}

async function runUi(flags: UiFlags, io: Io): Promise<number> {
  try {
    const port = parsePort(flags.port);
    const cipher = cipherFrom(io, flags.keys);
    const options: DataDirOptions = cipher === undefined ? {} : { cipher };
    const dir = resolve(io.cwd, flags.data);
    // Opened once up front so a wrong or damaged directory fails here, not on the first page view.
    await (await openDataDir(io, flags, "ui")).close();
    const server = await listen(port, () => DataDirReader.open(dir, options));
    const c = paint(io.color);
    io.stdout.write(`fusee ui: ${c.bold(server.url)}  (${dir}, read afresh on each request; Ctrl-C to stop)\n`);
    await io.interrupted();
    await server.close();
    return ExitCode.Ok;
  } catch (e) {
    return reportError(io, "ui", e, false);
  }
}

async function listen(port: number, open: () => Promise<DataDirReader>): Promise<UiServer> {
  try {
    return await startUiServer({ port, open });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code === "EADDRINUSE" || code === "EACCES") {
      throw new UsageError(`cannot listen on 127.0.0.1:${port} (${code}); pick another --port, or 0 for a free one`);
    }
    throw e;
  }
}

function parsePort(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 65_535) throw new UsageError(`--port must be a whole number from 0 to 65535; got ${text}`);
  return n;
}
