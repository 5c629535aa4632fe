import "reflect-metadata";
import { expect } from "chai";
import { RejectedError } from "../../src/core/errors.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";

let sent: string | undefined;

/** Waits a second for the answer to its token, and stays a while after the wait ends either way. */
@Workflow("token-timeout-lingers")
class Lingers {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    try {
      const answer = await this.ctx.awaitCompletion<string>("answer", ({ token }) => void (sent = token), { waitTimeout: "1s" });
      return `answered ${answer}`;
    } catch (e) {
      await this.ctx.sleep("10s");
      throw e;
    }
  }
}

async function lateAnswer(restart: boolean): Promise<unknown> {
  sent = undefined;
  let engine = await TestEngine.create({ workflows: [Lingers] });
  try {
    await engine.start(Lingers, "w", undefined);
    await engine.idle();
    expect(sent, "the token was sent").to.be.a("string");
    const token = String(sent);
    await engine.clock.advance("2s");
    await engine.idle();
    if (restart) engine = await engine.restart();
    return await engine.complete(token, "late").then(
      () => "acknowledged",
      (e: unknown) => e,
    );
  } finally {
    await engine.shutdown();
  }
}

describe("an answer to a token whose wait timed out", () => {
  it("is refused while the run goes on", async () => {
    expect(await lateAnswer(false)).to.be.instanceOf(RejectedError);
  });

  it("is refused after a restart too", async () => {
    expect(await lateAnswer(true)).to.be.instanceOf(RejectedError);
  });
});
