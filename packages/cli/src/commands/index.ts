import type { CommandModule } from "./command-context.js";
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
