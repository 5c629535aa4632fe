import type { Command } from "commander";
import type { Io } from "../io.js";

/** What a command module gets: the program to add itself to, and the output. */
export interface CommandContext {
  readonly io: Io;
  /** Set by the command's action; the process exits with it. */
  exitCode: number;
}

/** One command of `fusee`: a file under src/commands that adds itself to the program. */
export type CommandModule = (program: Command, context: CommandContext) => void;
