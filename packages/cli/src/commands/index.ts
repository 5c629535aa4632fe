import type { Command } from "commander";
import type { Io } from "../io.js";
import { benchCommand } from "./bench.js";
import { describeCommand } from "./describe.js";
import { exportCommand } from "./export.js";
import { genCommand } from "./gen.js";
import { listCommand } from "./list.js";
import { patchesCommand } from "./patches.js";
import { repairCommand } from "./repair.js";
import { replayCommand } from "./replay.js";
import { schedulesCommand } from "./schedules.js";
import { uiCommand } from "./ui.js";

/** What a command module gets: the program to add itself to, and the output. */
export interface CommandContext {
  readonly io: Io;
  /** Set by the command's action; the process exits with it. */
  exitCode: number;
}

/** One command of `fusee`: a file under src/commands that adds itself to the program. */
export type CommandModule = (program: Command, context: CommandContext) => void;

/** Every command, in the order `fusee --help` lists them. */
export const commands: readonly CommandModule[] = [
  genCommand,
  listCommand,
  describeCommand,
  schedulesCommand,
  exportCommand,
  replayCommand,
  patchesCommand,
  uiCommand,
  repairCommand,
  benchCommand,
];
