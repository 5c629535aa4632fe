/*
 * Runs a Messenger on a local data directory and kills its own process with SIGKILL the moment the
 * Tally applies the first number: the signal is durable in the Tally's journal, and the Messenger's
 * step that sent it is not yet in its own. Arguments: the data directory.
 */
import "reflect-metadata";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { hooks, Messenger, Tally } from "./fixtures.js";

const [dir] = process.argv.slice(2) as [string];
hooks.onAdd = (n) => {
  if (n === 1) process.kill(process.pid, "SIGKILL");
};
const engine = await Engine.open(Config.local(dir).shards(4), { workflows: [Messenger, Tally] });
await engine.start(Messenger, "messenger-1", "tally-1");
process.stdout.write("ready\n");
