import { expect } from "chai";
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { eventually, localKind, postgresKind, tempDir, type EngineKind } from "./harness.js";

/** Attempts that ran: their number as `ctx.attempt()` told them, and when. */
const attempts: Array<{ attempt: number; at: number }> = [];

@Workflow()
class Refund {
  constructor(private readonly ctx: Ctx) {}

  async run(failures: number): Promise<string> {
    return this.ctx.step(
      "refund",
      async () => {
        attempts.push({ attempt: this.ctx.attempt(), at: Date.now() });
        if (this.ctx.attempt() <= failures) throw new Error(`bank busy (attempt ${this.ctx.attempt()})`);
        return `refunded on attempt ${this.ctx.attempt()}`;
      },
      { retry: RetryPolicy.exponential(3, "250ms", "1s") },
    );
  }
}

for (const make of [localKind, postgresKind]) {
  describe(`a step's retry budget across restarts (${make().name})`, () => {
    let kind: EngineKind;
    beforeEach(() => {
      kind = make();
      attempts.length = 0;
    });
    afterEach(() => kind.cleanup());

    /** Opens the engine, waits for one more attempt, and shuts the engine down during its back-off. */
    async function oneAttemptThenStop(expected: number, failures?: number): Promise<void> {
      const engine = failures !== undefined ? await kind.open({ workflows: [Refund] }) : await kind.reopen({ workflows: [Refund] });
      if (failures !== undefined) await engine.start(Refund, "refund-1", failures);
      await eventually(`attempt ${expected}`, () => attempts.length === expected);
      await eventually(`attempt ${expected} journaled`, async () =>
        (await engine.describe("refund-1"))!.journal.some((r) => r.kind === "attempt" && r.attempt === expected),
      );
      await engine.shutdown();
    }

    it("counts attempts from the journal, so a 3-attempt policy runs 3 times across restarts, with its back-off", async () => {
      await oneAttemptThenStop(1, 5);
      await oneAttemptThenStop(2);
      const engine = await kind.reopen({ workflows: [Refund] });
      const err = (await engine
        .run("refund-1")
        .result()
        .catch((e: unknown) => e)) as Error;
      expect(err.message).to.equal("bank busy (attempt 3)");
      expect(attempts.map((a) => a.attempt)).to.deep.equal([1, 2, 3]);
      expect(attempts[1]!.at - attempts[0]!.at, "back-off before attempt 2").to.be.at.least(240);
      expect(attempts[2]!.at - attempts[1]!.at, "back-off before attempt 3").to.be.at.least(490);
      const journal = (await engine.describe("refund-1"))!.journal;
      expect(journal.map((r) => r.kind)).to.deep.equal(["start", "attempt", "attempt", "step", "finish"]);
      const step = journal[3];
      expect(step?.kind === "step" && step.attempts).to.equal(3);
      await engine.shutdown();
    });

    it("tells the attempt after a restart its number, and journals the success alone", async () => {
      await oneAttemptThenStop(1, 1);
      const engine = await kind.reopen({ workflows: [Refund] });
      expect(await engine.run("refund-1").result()).to.equal("refunded on attempt 2");
      expect(attempts.map((a) => a.attempt)).to.deep.equal([1, 2]);
      expect((await engine.describe("refund-1"))!.journal.map((r) => r.kind)).to.deep.equal(["start", "attempt", "step", "finish"]);
      await engine.shutdown();
    });
  });
}

describe("a step's retry budget in a crash loop (local, real processes)", function () {
  this.timeout(60_000);
  const worker = fileURLToPath(new URL("./fixtures/retry-worker.js", import.meta.url));

  /** Runs the worker until it has logged one more attempt, then SIGKILLs it (or lets it finish). */
  function runWorker(dir: string, logFile: string, kill: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [worker, dir, logFile], { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      // The attempt's failure is journaled within a millisecond or two; the kill lands in its back-off.
      if (kill) child.stdout.once("data", () => setTimeout(() => child.kill("SIGKILL"), 100));
      child.on("error", reject);
      child.on("exit", (code, signal) =>
        signal === "SIGKILL" || code === 0 ? resolve() : reject(new Error(`worker exited ${code}: ${stderr}`)),
      );
    });
  }

  it("runs a 3-attempt step 3 times when the process is killed after every attempt", async () => {
    const dir = tempDir("retry-loop");
    const logFile = join(dir, "attempts.log");
    try {
      await runWorker(join(dir, "data"), logFile, true);
      await runWorker(join(dir, "data"), logFile, true);
      await runWorker(join(dir, "data"), logFile, false);
      const lines = readFileSync(logFile, "utf8").trim().split("\n");
      expect(lines.map((l) => l.split(" ").slice(0, 2).join(" "))).to.deep.equal([
        "attempt 1",
        "attempt 2",
        "attempt 3",
        "finished failed",
      ]);
      const times = lines.slice(0, 3).map((l) => Number(l.split(" ")[2]));
      expect(times[1]! - times[0]!, "back-off before attempt 2").to.be.at.least(290);
      expect(times[2]! - times[1]!, "back-off before attempt 3").to.be.at.least(590);
      expect(lines[3]).to.contain("gateway down");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
