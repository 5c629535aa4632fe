import { readFileSync } from "node:fs";
import { Command, CommanderError, type Option } from "commander";
import type { CommandContext } from "./commands/command-context.js";
import { commands } from "./commands/index.js";
import { EXIT_CODES_HELP, ExitCode } from "./exit-codes.js";
import { type Io, paint } from "./io.js";

/**
 * Runs `fusee` with the given arguments (without `node` and the script) and returns the exit code.
 * Everything goes through `io`, so tests run the command line in-process.
 */
export async function runCli(args: readonly string[], io: Io): Promise<number> {
  const context: CommandContext = { io, exitCode: ExitCode.Ok };
  const program = createProgram(context);
  try {
    await program.parseAsync([...args], { from: "user" });
    return context.exitCode;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return ExitCode.Ok;
      return ExitCode.Usage;
    }
    io.stderr.write(`${paint(io.color).red("fusee: internal error:")} ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return ExitCode.Internal;
  }
}

function createProgram(context: CommandContext): Command {
  const { io } = context;
  const colors = paint(io.color);
  const program = new Command("fusee")
    .description("fusee: durable workflows for Node.js. Generates typed clients, inspects data directories and repairs damaged ones.")
    .version(version(), "-V, --version")
    .exitOverride()
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(colors.red(s)),
    })
    .addHelpText("after", `\n${DATA_DIR_HELP}\n\n${EXIT_CODES_HELP}`);
  for (const add of commands) add(program, context);
  checkUnknownOptionsFirst(program);
  return program;
}

/**
 * Commander checks required options before unknown ones, so a misspelt `--date` read as a missing
 * `--data`. Required options are checked here instead, once commander has refused unknown options
 * (with its "did you mean" suggestion), just before the action runs.
 */
function checkUnknownOptionsFirst(program: Command): void {
  const required = new Map<Command, Option[]>();
  const visit = (command: Command): void => {
    const options = command.options.filter((o) => o.mandatory);
    for (const option of options) option.mandatory = false;
    if (options.length > 0) required.set(command, options);
    command.commands.forEach(visit);
  };
  visit(program);
  program.hook("preAction", (_program, action) => {
    for (const option of required.get(action) ?? []) {
      if (action.getOptionValue(option.attributeName()) === undefined) {
        action.error(`error: required option '${option.flags}' not specified`, { code: "commander.missingMandatoryOptionValue" });
      }
    }
  });
}

const DATA_DIR_HELP = `Data directories:
  list, describe, schedules, export, patches and ui only read: they take no lock and work while an engine
  runs on the directory (to read it from code, use exportFromDir or DataDirReader). A write torn by
  a crash is left out and reported on standard error; damage exits 1 naming shard, segment file and
  offset. repair (engine stopped) cuts each damaged shard there so an engine opens it again.`;

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
  return manifest.version ?? "0.0.0";
}
