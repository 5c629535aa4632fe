/*
 * Kills its own process with SIGKILL once the receiving workflow has what a message brought and
 * before the sending workflow journaled that it sent it. Arguments: the data directory and the
 * scenario: "start" (a LooperStarter starts a Looper) or "update" (a Bumper bumps a Summer).
 */
import "reflect-metadata";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { Bumper, Looper, LooperStarter, resendHooks, Summer } from "./resend-fixtures.js";

const [dir, scenario] = process.argv.slice(2) as [string, "start" | "update"];
const die = (): void => void process.kill(process.pid, "SIGKILL");
const engine = await Engine.open(Config.local(dir).shards(4), { workflows: [Looper, LooperStarter, Summer, Bumper] });
if (scenario === "start") {
  resendHooks.onFirstRound = die;
  await engine.start(LooperStarter, "starter-1", "looper-1");
} else {
  resendHooks.onBump = die;
  await engine.start(Summer, "summer-1", 0);
  await engine.start(Bumper, "bumper-1", "summer-1");
}
