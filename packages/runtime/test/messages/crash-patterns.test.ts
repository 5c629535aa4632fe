import "reflect-metadata";
import { expect } from "chai";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Bumper, Looper, LooperStarter, Summer } from "./resend-fixtures.js";

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Crashes the test engine after `turns` turns of the event loop, with crash pattern `seed`, and
 * lets the engine that opens on what survived finish the scenario.
 */
async function crashAfter<T>(
  turns: number,
  seed: number,
  begin: (engine: TestEngine) => Promise<void>,
  end: (engine: TestEngine) => Promise<T>,
): Promise<T> {
  let engine = await TestEngine.create({ workflows: [Summer, Bumper, Looper, LooperStarter], seed });
  await begin(engine);
  for (let i = 0; i < turns; i++) await turn();
  engine = await engine.crash();
  try {
    return await end(engine);
  } finally {
    await engine.shutdown();
  }
}

describe("messages between workflows under the test engine's crashes, one shard's batch kept and another's lost", () => {
  it("answers an update once and applies it once, wherever the crash falls while the target continues as new", async () => {
    for (let turns = 0; turns < 10; turns++) {
      for (let seed = 0; seed < 4; seed++) {
        const [answer, total] = await crashAfter(
          turns,
          seed,
          async (engine) => {
            await engine.start(Summer, "summer-1", 0);
            await engine.start(Bumper, "bumper-1", "summer-1");
          },
          async (engine) => {
            const answer = await engine.run<number>("bumper-1").result();
            await engine.run("summer-1").signal("close");
            return [answer, await engine.run<number>("summer-1").result()];
          },
        );
        expect([answer, total], `crash after ${turns} turns, pattern ${seed}`).to.deep.equal([5, 5]);
      }
    }
  });

  it("starts a target once, wherever the crash falls while it continues as new", async () => {
    for (let turns = 0; turns < 10; turns++) {
      for (let seed = 0; seed < 4; seed++) {
        const outcome = await crashAfter(
          turns,
          seed,
          async (engine) => {
            await engine.start(LooperStarter, "starter-1", "looper-1");
          },
          async (engine) => {
            const sender = await engine.run<string>("starter-1").result();
            const looper = engine.run<number>("looper-1");
            await engine.idle();
            const runId = (await looper.status()).runId;
            await looper.signal("close");
            return `${sender} ${runId} ${await looper.result()}`;
          },
        );
        expect(outcome, `crash after ${turns} turns, pattern ${seed}`).to.equal("started once 2 1");
      }
    }
  });
});
