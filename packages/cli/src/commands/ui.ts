import { resolve } from "node:path";
import * as bundledRuntime from "@fusee/runtime";
import { DataDirReader, type DataDirOptions, type Engine, type PayloadCipher } from "@fusee/runtime";
import type { Command } from "commander";
import { cipherFrom, dataDirOptions, openDataDir, reportError, UsageError, type DataDirFlags } from "../data-dir.js";
import { ExitCode } from "../exit-codes.js";
import { type Io, paint } from "../io.js";
import type { UiActions } from "../ui/ui-actions.js";
import type { CodeReplay } from "../ui/run-view.js";
import { startUiServer, type UiServer, type UiServerOptions } from "../ui/server.js";
import { loadWorkflows, type Runtime } from "../workflow-modules.js";

type LoadedWorkflows = Awaited<ReturnType<typeof loadWorkflows>>;
import type { CommandContext } from "./command-context.js";

interface UiFlags extends DataDirFlags {
  port: string;
  allowActions?: boolean;
  workflows?: string[];
}

/**
 * `fusee ui`: a local web page of a data directory's runs, journals and schedules, live while an
 * engine runs on it. With `--workflows` it replays unfinished runs through their code to show what
 * they wait for. With `--allow-actions` it opens the directory as its writer so the page can signal,
 * cancel, terminate and reset runs; when another process writes the directory, the pages say that
 * actions are unavailable and why.
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
      "let the page signal, cancel, terminate and reset runs, one or a filter's worth: opens the directory as its writer, which only works while no engine runs on it",
    )
    .option(
      "-w, --workflows <module>",
      "compiled module exporting the @Workflow classes: replayed to show what unfinished runs wait for, and with --allow-actions run here (needed to reset runs); repeat for more modules",
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
    // Opened once up front so a wrong or damaged directory fails here, not on the first page view.
    const probe = await openDataDir(io, flags, "ui");
    const shards = probe.shardCount;
    await probe.close();
    const code = flags.workflows === undefined ? undefined : await loadWorkflows(io, flags.workflows);
    const writer = flags.allowActions === true ? await openWriter(dir, shards, cipher, code) : undefined;
    const engine = writer !== undefined && "engine" in writer ? writer.engine : undefined;
    try {
      const server = await listen({
        port,
        open: () => DataDirReader.open(dir, options),
        ...(engine !== undefined ? { actions: actionsOf(engine) } : {}),
        ...(writer !== undefined && "unavailable" in writer ? { actionsUnavailable: writer.unavailable } : {}),
        ...(code !== undefined ? { replay: replayThrough(code) } : {}),
      });
      const c = paint(io.color);
      const mode =
        writer === undefined
          ? "read afresh on each request"
          : engine !== undefined
            ? "actions allowed: this process writes the directory"
            : "actions unavailable: another process writes the directory";
      io.stdout.write(`fusee ui: ${c.bold(server.url)}  (${dir}, ${mode}; Ctrl-C to stop)\n`);
      if (writer !== undefined && "unavailable" in writer) io.stderr.write(`fusee ui: actions are unavailable: ${writer.unavailable}\n`);
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

/**
 * Opens the directory as its writer, through the runtime the workflow modules import (the bundled
 * one without them), or says why it cannot: another process writes it.
 */
async function openWriter(
  dir: string,
  shards: number,
  cipher: PayloadCipher | undefined,
  code: LoadedWorkflows | undefined,
): Promise<{ engine: Engine } | { unavailable: string }> {
  const { runtime, classes } = code ?? { runtime: bundledRuntime as Runtime, classes: [] };
  let config = runtime.Config.local(dir).shards(shards);
  if (cipher !== undefined) config = config.codec(cipher);
  try {
    return { engine: await runtime.Engine.open(config, { workflows: classes }) };
  } catch (e) {
    return { unavailable: `${dir} cannot be opened for writing: ${(e as Error)?.message ?? String(e)}` };
  }
}

/** A replay of a run's journal through the given workflow classes. */
function replayThrough(code: LoadedWorkflows): CodeReplay {
  const replayer = new code.runtime.Replayer().register(...code.classes);
  return (journal) => replayer.replay(journal);
}

function actionsOf(engine: Engine): UiActions {
  return {
    signal: (id, name, value) => engine.run(id).signal(name, value),
    cancel: (id, reason) => engine.run(id).cancel(reason),
    terminate: (id, reason) => engine.run(id).terminate(reason),
    reset: (id, step) => engine.run(id).reset(step),
  };
}

async function listen(options: UiServerOptions): Promise<UiServer> {
  try {
    return await startUiServer(options);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code === "EADDRINUSE" || code === "EACCES") {
      throw new UsageError(`cannot listen on 127.0.0.1:${options.port} (${code}); pick another --port, or 0 for a free one`);
    }
    throw e;
  }
}

function parsePort(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 65_535) throw new UsageError(`--port must be a whole number from 0 to 65535; got ${text}`);
  return n;
}
