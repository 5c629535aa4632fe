import { resolve } from "node:path";
import * as bundledRuntime from "@fusee/runtime";
import { DataDirReader, type DataDirOptions, type Engine, type PayloadCipher } from "@fusee/runtime";
import type { Command } from "commander";
import { cipherFrom, dataDirOptions, openDataDir, reportError, UsageError, type DataDirFlags } from "../data-dir.js";
import { ExitCode } from "../exit-codes.js";
import { type Io, paint } from "../io.js";
import type { UiActions } from "../ui/actions.js";
import { startUiServer, type UiServer } from "../ui/server.js";
import { loadWorkflows, type Runtime } from "../workflow-modules.js";
import type { CommandContext } from "./index.js";

interface UiFlags extends DataDirFlags {
  port: string;
  allowActions?: boolean;
  workflows?: string[];
}

/**
 * `fusee ui`: a local web page of a data directory's runs, journals and schedules, live while an
 * engine runs on it. With `--allow-actions` it opens the directory as its writer (no other engine
 * may run on it then) so the page can signal, cancel, terminate and reset runs.
 */
export function uiCommand(program: Command, context: CommandContext): void {
  dataDirOptions(
    program
      .command("ui")
      .description("Serve a web page of a data directory's runs, journals and schedules on 127.0.0.1, live while an engine runs on it."),
  )
    .option("-p, --port <n>", "the port to listen on; 0 picks a free one", "0")
    .option(
      "--allow-actions",
      "let the page signal, cancel, terminate and reset runs: opens the directory as its writer, so no engine may run on it",
    )
    .option(
      "-w, --workflows <module>",
      "with --allow-actions: compiled module exporting the @Workflow classes, which then run here (needed to reset runs; repeat for more modules)",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
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
    if (flags.workflows !== undefined && flags.allowActions !== true)
      throw new UsageError("--workflows runs workflows, which needs --allow-actions");
    // Opened once up front so a wrong or damaged directory fails here, not on the first page view.
    const probe = await openDataDir(io, flags, "ui");
    const shards = probe.shardCount;
    await probe.close();
    const engine = flags.allowActions === true ? await openWriter(io, dir, shards, cipher, flags.workflows ?? []) : undefined;
    try {
      const server = await listen(port, () => DataDirReader.open(dir, options), engine === undefined ? undefined : actionsOf(engine));
      const c = paint(io.color);
      const mode = engine === undefined ? "read afresh on each request" : "actions allowed: this process writes the directory";
      io.stdout.write(`fusee ui: ${c.bold(server.url)}  (${dir}, ${mode}; Ctrl-C to stop)\n`);
      await io.interrupted();
      await server.close();
    } finally {
      await engine?.shutdown();
    }
    return ExitCode.Ok;
  } catch (e) {
    return reportError(io, "ui", e, false);
  }
}

/** Opens the directory as its writer, through the runtime the workflow modules import (the bundled one without them). */
async function openWriter(
  io: Io,
  dir: string,
  shards: number,
  cipher: PayloadCipher | undefined,
  modules: readonly string[],
): Promise<Engine> {
  const { runtime, classes } = modules.length > 0 ? await loadWorkflows(io, modules) : { runtime: bundledRuntime as Runtime, classes: [] };
  let config = runtime.Config.local(dir).shards(shards);
  if (cipher !== undefined) config = config.codec(cipher);
  try {
    return await runtime.Engine.open(config, { workflows: classes });
  } catch (e) {
    throw new UsageError(
      `--allow-actions needs to write ${dir}, and it cannot be opened for writing: ${(e as Error)?.message ?? String(e)}. ` +
        "Stop the engine running on it, or run fusee ui without --allow-actions to watch it.",
    );
  }
}

function actionsOf(engine: Engine): UiActions {
  return {
    signal: (id, name, value) => engine.run(id).signal(name, value),
    cancel: (id, reason) => engine.run(id).cancel(reason),
    terminate: (id, reason) => engine.run(id).terminate(reason),
    reset: (id, step) => engine.run(id).reset(step),
  };
}

async function listen(port: number, open: () => Promise<DataDirReader>, actions: UiActions | undefined): Promise<UiServer> {
  try {
    return await startUiServer({ port, open, ...(actions !== undefined ? { actions } : {}) });
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
