import { expect } from "chai";
import { spawn } from "node:child_process";
import { cpSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Config } from "../../src/engine/config.js";
import { Engine, type EngineOptions } from "../../src/engine/engine.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { tempDir } from "./harness.js";
import { runIndexOf, type RunIndexView } from "./support/run-index-view.js";

const worker = fileURLToPath(new URL("./fixtures/nap-worker.js", import.meta.url));
const NAPS = 40;
const KILLS = 8;

/** Runs the worker; kills it `killAfterMs` after it opened the engine, or waits for it to finish. */
function runWorker(dir: string, mode: "work" | "finish", killAfterMs: number, summary = ""): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker, dir, String(NAPS), mode, summary], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    let timer: NodeJS.Timeout | undefined;
    child.stdout.once("data", () => {
      if (mode === "work") timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (timer) clearTimeout(timer);
      if (signal !== "SIGKILL" && code !== 0) reject(new Error(`worker exited ${code}: ${stderr}`));
      else resolve();
    });
  });
}

function snapshot(view: RunIndexView): unknown[] {
  return [...view.runs.values()]
    .map((e) => [e.id, e.type, e.runId, e.stream, e.finished, e.appended, e.durable, e.attributes, view.timers.get(e) ?? []])
    .sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1));
}

/** The index an open builds of a copy of `dir`, on a clock that stands still, with no workflow to resume. */
async function indexOf(dir: string, copy: string, passes: EngineOptions["recoveryPasses"]): Promise<unknown[]> {
  cpSync(dir, copy, { recursive: true });
  const engine = await Engine.open(Config.local(copy).shards(2).clock(new VirtualClock(Date.now())), { recoveryPasses: passes });
  try {
    return snapshot(runIndexOf(engine));
  } finally {
    await engine.shutdown();
  }
}

@Workflow("alarm")
class Alarm {
  constructor(private readonly ctx: Ctx) {}
  async run(ms: number): Promise<string> {
    await this.ctx.step("set", async () => ms);
    this.ctx.setAttributes({ ms });
    await this.ctx.sleep(ms);
    return this.ctx.step("rang", async () => `rang after ${ms}`);
  }
}

describe("one-pass open across restarts (local)", function () {
  this.timeout(240_000);

  it(`resumes sleeping, continuing runs after ${KILLS} SIGKILLs, each open indexing as a scan after recovery would`, async () => {
    const root = tempDir("one-pass-kill");
    try {
      const dir = join(root, "data");
      for (let kill = 0; kill < KILLS; kill++) {
        await runWorker(dir, "work", 30 + Math.floor(Math.random() * 300));
        const one = await indexOf(dir, join(root, `one-${kill}`), "one-pass");
        const two = await indexOf(dir, join(root, `two-${kill}`), "two-pass");
        expect(one, `index after kill ${kill}`).to.deep.equal(two);
        expect(one.length, "runs indexed").to.be.greaterThan(0);
      }
      const summary = join(root, "summary.json");
      await runWorker(dir, "finish", 0, summary);
      const { results, statuses } = JSON.parse(readFileSync(summary, "utf8")) as { results: number[]; statuses: unknown[][] };
      // Three rounds of total += n + round: 3n + 3.
      expect(results).to.deep.equal(Array.from({ length: NAPS }, (_, n) => 3 * n + 3));
      expect(statuses).to.deep.equal(Array.from({ length: NAPS }, (_, n) => ["ok", 3, { round: 2, total: 3 * n + 3 }]));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("fires timers that were pending at a clean close, and keeps those that fired and the runs that finished", async function () {
    // A timer left unarmed leaves its result waiting forever: fail soon.
    this.timeout(20_000);
    const dir = tempDir("one-pass-alarm");
    const clock = new VirtualClock();
    const config = Config.local(dir).shards(2).clock(clock);
    try {
      let engine = await Engine.open(config, { workflows: [Alarm] });
      for (let i = 0; i < 6; i++) await engine.start(Alarm, `alarm-${i}`, (i + 1) * 60_000);
      await engine.idle();
      await clock.advance("3m");
      expect(await engine.run("alarm-2").result()).to.equal("rang after 180000");
      await engine.shutdown();

      engine = await Engine.open(config, { workflows: [Alarm] });
      const finished = async (): Promise<boolean[]> =>
        Promise.all(Array.from({ length: 6 }, async (_, i) => (await engine.status(`alarm-${i}`))?.status === "ok"));
      expect(await finished()).to.deep.equal([true, true, true, false, false, false]);
      expect((await engine.status("alarm-4"))?.attributes).to.deep.equal({ ms: 300_000 });
      await engine.idle();
      // Each timer fires when the clock passes it, not before.
      await clock.advance("1m");
      expect(await engine.run("alarm-3").result()).to.equal("rang after 240000");
      await engine.idle();
      expect(await finished()).to.deep.equal([true, true, true, true, false, false]);
      await clock.advance("2m");
      for (let i = 4; i < 6; i++) expect(await engine.run(`alarm-${i}`).result()).to.equal(`rang after ${(i + 1) * 60_000}`);
      await engine.shutdown();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
