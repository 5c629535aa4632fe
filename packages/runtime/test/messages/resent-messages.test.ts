import "reflect-metadata";
import { expect } from "chai";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { eventually, tempDir } from "../runtime/harness.js";
import { Bumper, Looper, LooperStarter, Summer } from "./resend-fixtures.js";

const WORKER = fileURLToPath(new URL("./resend-worker.js", import.meta.url));

/** Runs the worker's scenario until it kills itself; returns the data directory it left. */
async function killedWorker(scenario: "start" | "update"): Promise<string> {
  const dir = tempDir(`resend-${scenario}`);
  const child = spawn(process.execPath, [WORKER, dir, scenario], { stdio: "ignore" });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on("close", (_code, s) => resolve(s)));
  expect(signal).to.equal("SIGKILL");
  return dir;
}

describe("messages sent again after a crash, to a target that continued as new meanwhile (local, real processes)", () => {
  it("should find a start it performed in the target's next run, and not refuse the sender", async () => {
    const dir = await killedWorker("start");
    // The target goes first: it continues as new before the sender, resumed after it, sends again.
    const engine = await Engine.open(Config.local(dir).shards(4), { workflows: [Looper] });
    try {
      const looper = engine.run<number>("looper-1");
      await eventually("the target's next run", async () => (await looper.status()).runId === 2);
      engine.register(LooperStarter);
      expect(await engine.run("starter-1").result()).to.equal("started once");
      expect((await looper.status()).runId, "the target was not started again").to.equal(2);
      await looper.signal("close");
      expect(await looper.result()).to.equal(1);
    } finally {
      await engine.shutdown();
    }
  });

  it("should answer an update it applied from the target's next run, not apply it twice", async () => {
    const dir = await killedWorker("update");
    const engine = await Engine.open(Config.local(dir).shards(4), { workflows: [Summer] });
    try {
      const summer = engine.run<number>("summer-1");
      await eventually("the target's next run", async () => (await summer.status()).runId === 2);
      engine.register(Bumper);
      expect(await engine.run("bumper-1").result(), "the sender's answer").to.equal(5);
      await summer.signal("close");
      expect(await summer.result(), "the update was applied once").to.equal(5);
    } finally {
      await engine.shutdown();
    }
  });
});
